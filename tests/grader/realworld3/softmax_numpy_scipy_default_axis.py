# quizprep: exercise=softmax-numpy
# style: a wrapper around a SciPy-style softmax that forgets to pass the axis on
# expect: fail diagnosis=softmax-all-axes
# bug: the helper's axis defaults to None, so every element is normalised together
import numpy as np


def _softmax(x, axis=None):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)


def stable_softmax(x, dim=-1):
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    return _softmax(work).astype(x.dtype)
