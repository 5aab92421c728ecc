# quizprep: exercise=softmax-numpy
# style: log-domain: the normaliser from np.logaddexp.reduce (a ufunc reduction that never overflows), computed in float64 and cast back with astype
# expect: pass
import numpy as np


def stable_softmax(x: np.ndarray, dim: int = -1) -> np.ndarray:
    wide = x.astype(np.float64)
    log_norm = np.logaddexp.reduce(wide, axis=dim, keepdims=True)
    return np.exp(wide - log_norm).astype(x.dtype)
