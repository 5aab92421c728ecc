"""Exercise: a numerically stable softmax.

    stable_softmax(x, dim=-1) -> tensor of x's shape and dtype

softmax(x)_i = exp(x_i) / Σ_j exp(x_j) along `dim`. It must survive logits of ±1e4 in float32
and float16 without inf or NaN, keep gradients flowing, and leave `x` unmodified.

Rules: torch.softmax, Tensor.softmax, F.softmax and log_softmax are off limits here; exp, amax,
sum and friends are fine.

What the interviewer expects you to say:
- softmax(x) = softmax(x - c) for any c constant along `dim`; choosing c = max makes every
  exponent <= 0, so nothing overflows and the largest term is exactly 1 (no 0/0);
- the shift must be per row (keepdim=True), not over the whole tensor;
- in fp16, exp overflows above about 11.1; in fp32 above about 88.7.

Check your work:  quizprep grade softmax.py
"""
from __future__ import annotations

import torch


def stable_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    raise NotImplementedError
