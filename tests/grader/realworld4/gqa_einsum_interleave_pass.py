# quizprep: exercise=gqa
# style: (B, T, H, d) layout throughout, repeat_interleave on the head axis, einsum for both products, type hints
# expect: pass
from __future__ import annotations

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.d_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.d_head)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d_head)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d_head)
        self.W_o = nn.Linear(n_heads * self.d_head, d_model)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        B, T, _ = x.shape
        rep = self.n_heads // self.n_kv_heads
        q = self.W_q(x).unflatten(-1, (self.n_heads, self.d_head))
        k = self.W_k(x).unflatten(-1, (self.n_kv_heads, self.d_head)).repeat_interleave(rep, dim=2)
        v = self.W_v(x).unflatten(-1, (self.n_kv_heads, self.d_head)).repeat_interleave(rep, dim=2)
        logits = torch.einsum("bqhd,bkhd->bhqk", q, k) * self.d_head ** -0.5
        if mask is not None:
            logits = torch.where(mask, logits, torch.tensor(float("-inf"), dtype=logits.dtype, device=logits.device))
        probs = logits.softmax(dim=-1)
        out = torch.einsum("bhqk,bkhd->bqhd", probs, v).flatten(-2)
        return self.W_o(out)
