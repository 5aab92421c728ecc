# quizprep: exercise=attention-numpy
# style: NumPy tutorial code: a softmax helper with keepdims, np.swapaxes for k transposed, the mask multiplied in as 0/1 ("zero out the positions we may not look at")
# expect: fail diagnosis=mask-after-softmax
# bug: the mask is applied after the softmax by multiplying the weights with it, and the rows are not renormalised: the visible weights no longer sum to 1 whenever a key is masked
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.shape[-1]
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(d_k).astype(q.dtype)
    weights = softmax(scores, axis=-1)
    if mask is not None:
        weights = weights * mask  # zero out the positions we may not look at
    weights = weights.astype(q.dtype)
    out = np.matmul(weights, v)
    return out.astype(q.dtype), weights
