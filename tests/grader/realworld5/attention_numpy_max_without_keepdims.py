# quizprep: exercise=attention-numpy
# style: compact picoGPT-like functions, np.einsum for both products, np.where with -inf for the mask, a separate softmax helper
# expect: fail diagnosis=no-keepdim
# bug: the max shift is taken without keepdims, so (..., n, m) − (..., n) subtracts query maxima along the key axis (wrong when n == m, a broadcast error otherwise)
import numpy as np


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1))
    return e / np.sum(e, axis=-1, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.shape[-1]
    logits = np.einsum("...qd,...kd->...qk", q, k) / np.sqrt(d_k).astype(q.dtype)
    if mask is not None:
        logits = np.where(mask, logits, -np.inf)
    weights = softmax(logits).astype(q.dtype)
    return np.einsum("...qk,...kd->...qd", weights, v).astype(q.dtype), weights
