# quizprep: exercise=softmax-numpy
"""Exercise (NumPy track): a numerically stable softmax with NumPy only.

    stable_softmax(x, dim=-1) -> np.ndarray of x's shape and dtype

x is an np.ndarray (float64, float32 or float16); `dim` is the axis to normalise, as NumPy's
`axis`. softmax(x)_i = exp(x_i) / Σ_j exp(x_j) along `dim`. It must survive logits of ±1e4
in float32 and float16 without inf or NaN, return x's dtype, and leave `x` unmodified. The
grader hands you arrays and converts what you return; the checks and diagnoses are those of
softmax.py, without the gradient.

What the interviewer expects you to say:
- softmax(x) = softmax(x - c) for any c constant along the axis; choosing c = max makes
  every exponent <= 0, so nothing overflows and the largest term is exactly 1;
- the shift must be per row: x.max(axis=dim, keepdims=True), not x.max();
- in float16, exp overflows above about 11.1; in float32 above about 88.7.

Check your work:  quizprep grade softmax_numpy.py
"""
from __future__ import annotations

import numpy as np


def stable_softmax(x: np.ndarray, dim: int = -1) -> np.ndarray:
    raise NotImplementedError
