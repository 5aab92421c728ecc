# quizprep: exercise=attention-numpy
# expect: check=mask-padding diagnosis=mask-inverted
# True read as 'hide'.
from __future__ import annotations

import numpy as np


def scaled_dot_product_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                                 mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    work = np.float32 if q.dtype == np.float16 else q.dtype
    scores = (q.astype(work) @ np.swapaxes(k.astype(work), -1, -2)) / np.sqrt(q.shape[-1]).astype(work)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)  # BUG
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = np.where(np.isneginf(row_max), 0, row_max)  # a fully masked row stays 0/0, not -inf - -inf
    weights = np.exp(scores - row_max)
    with np.errstate(invalid="ignore", divide="ignore"):
        weights = weights / weights.sum(axis=-1, keepdims=True)
    return (weights @ v.astype(work)).astype(q.dtype), weights.astype(q.dtype)
