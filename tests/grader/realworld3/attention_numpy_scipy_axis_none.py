# quizprep: exercise=attention-numpy
# style: a SciPy-style softmax helper (axis defaults to None, as scipy.special.softmax's does)
# expect: fail diagnosis=softmax-all-axes
# bug: the helper is called without an axis, so it normalises over every element
import numpy as np


def softmax(x, axis=None):
    x_max = np.amax(x, axis=axis, keepdims=True)
    exp_x_shifted = np.exp(x - x_max)
    return exp_x_shifted / np.sum(exp_x_shifted, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return np.matmul(weights, v).astype(q.dtype), weights.astype(q.dtype)
