# quizprep: exercise=kv-cache
# expect: check=decode diagnosis=no-output-projection unread=W_o
# W_o is never applied.
from __future__ import annotations

import math

import torch


def append_kv(cache_k: torch.Tensor, cache_v: torch.Tensor, k: torch.Tensor,
              v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.cat([cache_k, k], dim=-2), torch.cat([cache_v, v], dim=-2)


def _split(x: torch.Tensor, heads: int) -> torch.Tensor:
    batch, length, width = x.shape
    return x.reshape(batch, length, heads, width // heads).transpose(1, 2)


def decode_step(x: torch.Tensor, cache_k: torch.Tensor, cache_v: torch.Tensor, W_q: torch.Tensor,
                W_k: torch.Tensor, W_v: torch.Tensor, W_o: torch.Tensor,
                n_heads: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    d_head = W_q.shape[0] // n_heads
    kv_heads = W_k.shape[0] // d_head
    q = _split(x @ W_q.T, n_heads)
    cache_k, cache_v = append_kv(cache_k, cache_v, _split(x @ W_k.T, kv_heads), _split(x @ W_v.T, kv_heads))
    group = n_heads // kv_heads
    k, v = cache_k.repeat_interleave(group, dim=1), cache_v.repeat_interleave(group, dim=1)
    new, seen = x.shape[1], cache_k.shape[-2]
    visible = torch.arange(seen, device=x.device) <= torch.arange(new, device=x.device).unsqueeze(-1) + (seen - new)
    work = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    scores = (q.to(work) @ k.to(work).transpose(-2, -1)) / math.sqrt(d_head)
    scores = scores.masked_fill(~visible, float("-inf"))
    weights = (scores - scores.amax(dim=-1, keepdim=True)).exp()
    heads = (weights / weights.sum(dim=-1, keepdim=True)) @ v.to(work)
    merged = heads.transpose(1, 2).reshape(x.shape[0], new, n_heads * d_head).to(x.dtype)
    return merged, cache_k, cache_v
