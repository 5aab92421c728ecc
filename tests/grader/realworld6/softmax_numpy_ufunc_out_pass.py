# quizprep: exercise=softmax-numpy
# style: ufunc plumbing: one np.empty_like buffer, np.subtract / np.exp / in-place /= with out=, np.max with initial=-np.inf so a zero-size axis reduces too
# expect: pass
import numpy as np


def stable_softmax(x, dim=-1):
    out = np.empty_like(x)
    np.subtract(x, np.max(x, axis=dim, keepdims=True, initial=-np.inf), out=out)
    np.exp(out, out=out)
    out /= np.sum(out, axis=dim, keepdims=True, dtype=out.dtype)
    return out
