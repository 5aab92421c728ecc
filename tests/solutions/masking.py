"""Example solution for exercises/masking.py."""
from __future__ import annotations

import torch


def causal_mask(n: int, m: int | None = None) -> torch.Tensor:
    m = n if m is None else m
    return torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n)


def padding_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    positions = torch.arange(max_len, device=lengths.device)
    return (positions < lengths[:, None])[:, None, None, :]
