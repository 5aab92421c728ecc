# quizprep: exercise=attention-numpy
# expect: check=dtypes diagnosis=fill-overflow
# An additive mask, (1 − mask) · −1e9 in the input's dtype: right in float32; in float16 −1e9 is −inf
# and the allowed keys' 0 · (−inf) is NaN.
from __future__ import annotations

import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]).astype(q.dtype)
    if mask is not None:
        scores = scores + (1 - mask.astype(q.dtype)) * -1e9
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ v, weights
