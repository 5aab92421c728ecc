# quizprep: exercise=attention-numpy
# expect: check=values diagnosis=softmax-axis
# Normalised over the queries.
from __future__ import annotations

import numpy as np


def scaled_dot_product_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                                 mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    work = np.float32 if q.dtype == np.float16 else q.dtype
    scores = (q.astype(work) @ np.swapaxes(k.astype(work), -1, -2)) / np.sqrt(q.shape[-1]).astype(work)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    row_max = scores.max(axis=-2, keepdims=True)  # BUG
    row_max = np.where(np.isneginf(row_max), 0, row_max)  # a fully masked row stays 0/0, not -inf - -inf
    weights = np.exp(scores - row_max)
    with np.errstate(invalid="ignore", divide="ignore"):
        weights = weights / weights.sum(axis=-2, keepdims=True)  # BUG
    return (weights @ v.astype(work)).astype(q.dtype), weights.astype(q.dtype)
