# quizprep: exercise=softmax-numpy
# Correct, in another style: x minus its log-sum-exp, in float32 for float16 input.
import numpy as np


def stable_softmax(x, dim=-1):
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    peak = work.max(axis=dim, keepdims=True)
    log_total = peak + np.log(np.exp(work - peak).sum(axis=dim, keepdims=True))
    return np.exp(work - log_total).astype(x.dtype)
