# quizprep: exercise=gqa
# source: a one-line slip on mistralai/mistral-inference one_file_ref.py @ 215fc80d4a00177854b51a93fd3d455094f0e085 (repeat_kv: torch.repeat_interleave(keys, repeats=repeats, dim=2) on the (B, T, kv_heads, d) layout; Attention.forward: scores = matmul(query, key.transpose(2, 3)) * self.scale; scores += mask; softmax(scores.float()).type_as(query); Transformer.forward: mask = torch.log(0/1 band))
# style: Mistral's reference: heads repeated before the transpose, on axis 2 of (B, T, heads, d); an additive mask obtained as torch.log of a 0/1 mask (log 1 = 0, log 0 = -inf); softmax in float32 cast back with type_as
# adapter: wq/wk/wv/wo renamed W_q/W_k/W_v/W_o (bias=False as in the source); head_dim = d_model // n_heads; the given boolean mask goes through the same torch.log (in the scores' dtype) instead of the reference's banded causal one; RoPE, the rotating cache and the sliding window left out
# expect: fail diagnosis=repeat-wrong-axis
# bug: a slip of ours: repeat_interleave on dim=1, the sequence axis of Mistral's (B, T, heads, d) layout, instead of dim=2 (the heads axis it is on after the usual transpose): with n_kv_heads < n_heads the keys get T · H / G rows: a shape error for 1 < n_kv_heads < n_heads, and for n_kv_heads = 1 scores over T · H rows that no longer fit the (T, T) mask
from __future__ import annotations

import torch
from torch import nn


def repeat_kv(keys: torch.Tensor, values: torch.Tensor, repeats: int):
    keys = torch.repeat_interleave(keys, repeats=repeats, dim=1)
    values = torch.repeat_interleave(values, repeats=repeats, dim=1)
    return keys, values


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.head_dim = d_model // n_heads
        self.repeats = self.n_heads // self.n_kv_heads
        self.scale = self.head_dim**-0.5

        self.W_q = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.W_o = nn.Linear(n_heads * self.head_dim, d_model, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        bsz, seqlen, _ = x.shape

        xq, xk, xv = self.W_q(x), self.W_k(x), self.W_v(x)
        xq = xq.view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_kv_heads, self.head_dim)

        key, value = repeat_kv(xk, xv, self.repeats)

        query = xq.transpose(1, 2)
        key = key.transpose(1, 2)
        value = value.transpose(1, 2)
        # scores : [bsz, n_heads, seqlen, seqlen]
        scores = torch.matmul(query, key.transpose(2, 3)) * self.scale

        if mask is not None:
            scores = scores + torch.log(mask.to(scores.dtype))

        scores = scores.float()
        scores = nn.functional.softmax(scores, dim=-1).type_as(query)
        output = torch.matmul(scores, value)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.W_o(output)
