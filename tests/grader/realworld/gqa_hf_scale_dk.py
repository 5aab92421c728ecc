# quizprep: exercise=gqa
# style: Hugging Face-like GQA: hidden_shape view + transpose(1, 2), repeat_interleave on the head axis, finfo.min fill
# expect: fail diagnosis=scale-dk
# bug: scores are divided by head_dim instead of sqrt(head_dim)
import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.head_dim = d_model // n_heads
        self.num_key_value_groups = n_heads // n_kv_heads
        self.W_q = nn.Linear(d_model, n_heads * self.head_dim)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.head_dim)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.head_dim)
        self.W_o = nn.Linear(n_heads * self.head_dim, d_model)

    def forward(self, x, mask=None):
        input_shape = x.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.W_q(x).view(hidden_shape).transpose(1, 2)
        key_states = self.W_k(x).view(hidden_shape).transpose(1, 2)
        value_states = self.W_v(x).view(hidden_shape).transpose(1, 2)
        key_states = key_states.repeat_interleave(self.num_key_value_groups, dim=1)
        value_states = value_states.repeat_interleave(self.num_key_value_groups, dim=1)

        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / self.head_dim
        if mask is not None:
            attn_weights = attn_weights.masked_fill(~mask, torch.finfo(attn_weights.dtype).min)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value_states).transpose(1, 2).contiguous()
        return self.W_o(attn_output.reshape(*input_shape, -1))
