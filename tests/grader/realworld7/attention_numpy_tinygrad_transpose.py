# quizprep: exercise=attention-numpy
# source: tinygrad-style NumPy attention (tinygrad's early extra/ and examples written against (B, H, T, d) arrays: `k.transpose(0, 1, 3, 2)`)
# style: np.matmul with an explicit 4-D axes permutation, max-shifted exp, np.where mask
# expect: fail diagnosis=hard-coded-axis
# bug: k.transpose(0, 1, 3, 2) names four axes: it works only on 4-D (B, H, T, d) arrays and raises "axes don't match array" on the 2-D, 3-D inputs the exercise also passes; np.swapaxes(k, -1, -2) works for any rank
import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = np.matmul(q, k.transpose(0, 1, 3, 2)) / np.sqrt(q.shape[-1]).astype(q.dtype)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    weights = (e / e.sum(axis=-1, keepdims=True)).astype(q.dtype)
    return np.matmul(weights, v).astype(q.dtype), weights
