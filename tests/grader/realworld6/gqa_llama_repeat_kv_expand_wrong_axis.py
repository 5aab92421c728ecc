# quizprep: exercise=gqa
# style: Llama's LlamaAttention: q/k/v/o projections without bias, .view(bsz, q_len, -1, head_dim).transpose(1, 2), repeat_kv written as an expand of an inserted axis then a reshape, attn_weights + additive mask, softmax in float32
# expect: fail diagnosis=gqa-repeat
# bug: repeat_kv inserts the new axis BEFORE the KV-head axis (hidden_states[:, None]) instead of after it (hidden_states[:, :, None]), so the reshape tiles the KV heads (0, 1, 0, 1, ...) like Tensor.repeat: query head h reads KV head h % G instead of h // (H / G); exact for MHA and MQA
import math

import torch
from torch import nn


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, None, :, :, :].expand(batch, n_rep, num_key_value_heads, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.num_heads = n_heads
        self.num_key_value_heads = n_kv_heads
        self.head_dim = d_model // n_heads
        self.num_key_value_groups = n_heads // n_kv_heads
        self.W_q = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.W_o = nn.Linear(n_heads * self.head_dim, d_model, bias=False)

    def forward(self, x, mask=None):
        bsz, q_len, _ = x.size()
        query_states = self.W_q(x).view(bsz, q_len, -1, self.head_dim).transpose(1, 2)
        key_states = self.W_k(x).view(bsz, q_len, -1, self.head_dim).transpose(1, 2)
        value_states = self.W_v(x).view(bsz, q_len, -1, self.head_dim).transpose(1, 2)
        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            causal_mask = torch.zeros_like(attn_weights).masked_fill(~mask, torch.finfo(attn_weights.dtype).min)
            attn_weights = attn_weights + causal_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous().reshape(bsz, q_len, -1)
        return self.W_o(attn_output)
