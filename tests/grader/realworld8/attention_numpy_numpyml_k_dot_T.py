# quizprep: exercise=attention-numpy
# source: a one-line slip on ddbourgin/numpy-ml numpy_ml/neural_nets/layers/layers.py (DotProductAttention._fwd: scale = 1 / np.sqrt(d_k); scores = Q @ K.swapaxes(-2, -1) * scale; weights = self.softmax._fwd(scores); Y = weights @ V)
# style: swapaxes for Kᵀ, the Softmax layer's keepdims shift as a helper, any leading dims
# adapter: the exercise's boolean mask applied with np.where(mask, scores, -np.inf) before the softmax (numpy-ml's layer has none); the weights returned with Y
# expect: fail diagnosis=transpose-all-axes
# bug: K.T reverses every axis of a batched array ((B, H, m, d) becomes (d, m, H, B)), not only the last two: right for 2-D inputs only
import numpy as np


def _softmax(X, dim=-1):
    e_X = np.exp(X - np.max(X, axis=dim, keepdims=True))
    return e_X / e_X.sum(axis=dim, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = k.shape[-1]
    scale = 1 / np.sqrt(d_k)
    scores = q @ k.T * scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = _softmax(scores)
    Y = weights @ v
    return Y.astype(q.dtype, copy=False), weights.astype(q.dtype, copy=False)
