# quizprep: exercise=attention-numpy
# style: picoGPT-like attention (q @ k.T) applied to batched arrays
# expect: fail diagnosis=transpose-all-axes
# bug: k.T reverses every axis of a batched k instead of swapping the last two
import numpy as np


def softmax(x):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.T / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return (weights @ v).astype(q.dtype), weights.astype(q.dtype)
