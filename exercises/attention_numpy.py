# quizprep: exercise=attention-numpy
"""Exercise (NumPy track): scaled dot-product attention with NumPy only.

    scaled_dot_product_attention(q, k, v, mask=None) -> (out, weights)

q (..., n, d_k), k (..., m, d_k), v (..., m, d_v) are np.ndarrays (float64, float32 or
float16), with 0 to 3 leading dimensions. mask, when given, is a boolean array broadcastable
to (..., n, m): True means "may attend" (shapes (n, m), (B, 1, n, m) and (B, 1, 1, m) are
used). Return out (..., n, d_v) and weights (..., n, m), both in q's dtype:

    weights = softmax(q kᵀ / √d_k, over the keys), out = weights v

A row with every key masked is undefined and not compared. Logits in the hundreds must not
overflow, the inputs must not be modified, and non-contiguous arrays must work. The grader
hands you arrays and converts what you return; the checks and diagnoses are those of
attention.py, without the gradients.

What the interviewer expects you to say:
- np.matmul (@) batches over the leading axes; swap the last two axes of k with
  np.swapaxes(k, -1, -2) (k.T would reverse every axis);
- subtract the row maximum before np.exp, and mask with -inf before the softmax;
- the weights take O(n·m) memory per batch-head: the reason FlashAttention exists.

Check your work:  quizprep grade attention_numpy.py
"""
from __future__ import annotations

import numpy as np


def scaled_dot_product_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                                 mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    raise NotImplementedError
