# quizprep: exercise=gqa
# source: google/gemma_pytorch gemma/model.py @ 014acb7ac4563a5f77c76d7ff98f31b568c16508 (GemmaAttention.forward: qkv_proj split into xq, xk, xv viewed (B, S, heads, head_dim); keys and values written into the KV cache with index_copy_; torch.repeat_interleave(key, num_queries_per_kv, dim=2) when num_kv_heads != num_heads; q, k, v transposed to (B, heads, S, head_dim); q.mul_(scaling) with scaling = head_dim**-0.5; scores = matmul(q, k.transpose(2, 3)) + mask, where mask is additive (-2.3819763e38 above the diagonal); F.softmax(scores.float(), dim=-1).type_as(q); output transposed back, viewed (B, S, -1) and o_proj)
# style: Google's inference-only PyTorch Gemma: K/V heads expanded with repeat_interleave in (B, S, heads, d) layout before the transpose, the scale multiplied into q in place, an additive float mask filled with -2.3819763e38 (about bfloat16's lowest), the softmax in float32 then type_as(q)
# adapter: the fused qkv_proj and its split replaced by the contract's three Linear layers W_q, W_k, W_v (self.qkv_proj(hidden_states).split(...) → three calls; this also keeps q.mul_ legal under autograd, which forbids in-place writes to split() views); no RoPE (freqs_cis), no QK norm, no logit soft-capping (Gemma's configs without them), no KV cache (key = xk, value = xv: the contract's layer has none); the boolean mask becomes Gemma's additive form: 0 where True, -2.3819763e38 where False
# expect: pass
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()

        self.num_heads = n_heads
        self.num_kv_heads = n_kv_heads

        assert self.num_heads % self.num_kv_heads == 0
        self.num_queries_per_kv = self.num_heads // self.num_kv_heads

        self.hidden_size = d_model
        self.head_dim = d_model // n_heads

        self.q_size = self.num_heads * self.head_dim
        self.kv_size = self.num_kv_heads * self.head_dim

        self.scaling = self.head_dim**-0.5

        self.W_q = nn.Linear(self.hidden_size, self.q_size, bias=False)
        self.W_k = nn.Linear(self.hidden_size, self.kv_size, bias=False)
        self.W_v = nn.Linear(self.hidden_size, self.kv_size, bias=False)
        self.W_o = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        hidden_states = x
        hidden_states_shape = hidden_states.shape
        assert len(hidden_states_shape) == 3

        batch_size, input_len, _ = hidden_states_shape

        xq, xk, xv = self.W_q(hidden_states), self.W_k(hidden_states), self.W_v(hidden_states)

        xq = xq.view(batch_size, -1, self.num_heads, self.head_dim)
        xk = xk.view(batch_size, -1, self.num_kv_heads, self.head_dim)
        xv = xv.view(batch_size, -1, self.num_kv_heads, self.head_dim)

        key = xk
        value = xv
        if self.num_kv_heads != self.num_heads:
            # [batch_size, max_seq_len, n_local_heads, head_dim]
            key = torch.repeat_interleave(key, self.num_queries_per_kv, dim=2)
            value = torch.repeat_interleave(value,
                                            self.num_queries_per_kv,
                                            dim=2)

        # [batch_size, n_local_heads, input_len, head_dim]
        q = xq.transpose(1, 2)
        # [batch_size, n_local_heads, max_seq_len, head_dim]
        k = key.transpose(1, 2)
        v = value.transpose(1, 2)

        # [batch_size, n_local_heads, input_len, max_seq_len]
        q.mul_(self.scaling)
        scores = torch.matmul(q, k.transpose(2, 3))
        if mask is not None:
            mask = torch.zeros(mask.shape, dtype=torch.float, device=x.device).masked_fill(~mask, -2.3819763e38)
            scores = scores + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(q)

        # [batch_size, n_local_heads, input_len, head_dim]
        output = torch.matmul(scores, v)

        # [batch_size, input_len, hidden_dim]
        output = (output.transpose(1, 2).contiguous().view(
            batch_size, input_len, -1))
        output = self.W_o(output)
        return output
