# quizprep: exercise=attention
# source: openai/whisper whisper/model.py @ c0d2f624c09dc18e709e37c2ad90c039a4eb72a2 (MultiHeadAttention.qkv_attention, the non-SDPA branch: scale = (n_state // n_head) ** -0.25; qk = (q * scale) @ (k * scale).transpose(-1, -2); qk = qk + mask[:n_ctx, :n_ctx]; qk = qk.float(); w = F.softmax(qk, dim=-1).to(q.dtype); out = w @ v)
# style: the 1/sqrt(d) split as d^-1/4 on each of q and k before the matmul (keeps the fp16 product small), an additive -inf mask buffer, the softmax in float32 and cast back
# adapter: the per-head body only: q, k, v arrive already split, so n_state // n_head is d_k = q.shape[-1] and the view/permute head split is dropped; the boolean mask becomes whisper's additive form (0 where True, -inf where False) and is added whole instead of sliced [:n_ctx, :n_ctx] (whisper's buffer is square; the contract's masks are already (n, m)); returns (out, w) with w the softmax, not whisper's qk
# expect: pass
from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor


def qkv_attention(q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor] = None):
    n_state = q.shape[-1]
    scale = n_state ** -0.25

    qk = (q * scale) @ (k * scale).transpose(-1, -2)
    if mask is not None:
        qk = qk + mask
    qk = qk.float()

    w = F.softmax(qk, dim=-1).to(q.dtype)
    out = w @ v
    return out, w


def scaled_dot_product_attention(q, k, v, mask=None):
    if mask is not None:
        mask = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(~mask, float("-inf"))
    return qkv_attention(q, k, v, mask)
