# quizprep: exercise=softmax-numpy
# style: SciPy-style softmax with logsumexp, the axis passed through
# expect: pass
import numpy as np


def stable_softmax(x, dim=-1):
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    x_max = np.max(work, axis=dim, keepdims=True)
    lse = np.log(np.sum(np.exp(work - x_max), axis=dim, keepdims=True)) + x_max
    return np.exp(work - lse).astype(x.dtype)
