"""Classic attention mistakes, computed in the grader as hypotheses for the diagnosis.

Each function is the reference with exactly one thing done wrong, in float64 unless the
mistake is about precision (then it runs in the learner's dtype, as their code would).
"""
from __future__ import annotations

import math

import torch
from torch import Tensor

from quizprep.grader import reference

MASK_MODES = ("fill", "inverted", "after_softmax", "zero_fill", "ignored")


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, *, scale: float | None = None,
              softmax_dim: int | tuple[int, ...] = -1, mask_mode: str = "fill",
              compute_dtype: torch.dtype = torch.float64, shift: bool = True) -> tuple[Tensor, Tensor]:
    q, k, v = (t.to(compute_dtype) for t in (q, k, v))
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q.double() @ k.double().transpose(-2, -1) * scale).to(compute_dtype)
    if mask is not None and mask_mode in {"fill", "inverted", "zero_fill"}:
        keep = mask.bool() if mask_mode != "inverted" else ~mask.bool()
        fill = 0.0 if mask_mode == "zero_fill" else float("-inf")
        scores = scores.masked_fill(~keep, fill)
    if shift:
        scores = scores - scores.amax(dim=softmax_dim, keepdim=True)
    weights = scores.exp()
    weights = weights / weights.sum(dim=softmax_dim, keepdim=True)
    if mask is not None and mask_mode == "after_softmax":
        weights = weights * mask.to(weights.dtype)
    weights = weights.double()
    return weights @ v.double(), weights


def split_no_transpose(x: Tensor, heads: int) -> Tensor:
    """(B, T, H*d) viewed straight as (B, H, T, d): mixes positions and heads."""
    batch, length, width = x.shape
    return x.reshape(batch, heads, length, width // heads)


def split_interleaved(x: Tensor, heads: int) -> Tensor:
    """Head h takes features h, h+H, h+2H, ... instead of a contiguous block."""
    batch, length, width = x.shape
    return x.reshape(batch, length, width // heads, heads).permute(0, 3, 1, 2)


def merge_interleaved(x: Tensor) -> Tensor:
    """The inverse of split_interleaved: feature j·H + h of the output comes from head h."""
    batch, heads, length, d = x.shape
    return x.permute(0, 2, 3, 1).reshape(batch, length, d * heads)


def merge_no_transpose(x: Tensor) -> Tensor:
    batch, heads, length, d = x.shape
    return x.reshape(batch, length, heads * d)


def causal_no_diagonal(n: int, m: int | None = None) -> Tensor:
    m = n if m is None else m
    return reference.causal_mask(n, m) & ~_diagonal(n, m)


def _diagonal(n: int, m: int) -> Tensor:
    return torch.arange(m).unsqueeze(0) == (torch.arange(n).unsqueeze(-1) + (m - n))


def causal_no_offset(n: int, m: int | None = None) -> Tensor:
    m = n if m is None else m
    return torch.ones(n, m, dtype=torch.bool).tril()
