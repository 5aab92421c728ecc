# quizprep: exercise=softmax-numpy
# style: C-programmer's NumPy: the axis moved last with moveaxis, an np.ndindex loop over the rows, each row shifted by its own max, results written into a preallocated array
# expect: fail diagnosis=dtype-not-kept
# bug: np.empty(rows.shape) allocates float64, so float32 and float16 inputs come back as float64
import numpy as np


def stable_softmax(x, dim=-1):
    rows = np.moveaxis(x, dim, -1)
    out = np.empty(rows.shape)
    for idx in np.ndindex(*rows.shape[:-1]):
        row = rows[idx]
        e = np.exp(row - row.max())
        out[idx] = e / e.sum()
    return np.moveaxis(out, -1, dim)
