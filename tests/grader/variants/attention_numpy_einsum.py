# quizprep: exercise=attention-numpy
# Correct, in another style: einsum, an additive mask of finfo.min in float64, and a check that
# the grader really hands over NumPy arrays.
import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    assert all(isinstance(a, np.ndarray) for a in (q, k, v)), "the NumPy track passes arrays"
    scores = np.einsum("...id,...jd->...ij", q.astype(np.float64), k.astype(np.float64)) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + np.where(mask, 0.0, np.finfo(np.float64).min)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    out = np.einsum("...ij,...jd->...id", weights, v.astype(np.float64))
    return out.astype(q.dtype), weights.astype(q.dtype)
