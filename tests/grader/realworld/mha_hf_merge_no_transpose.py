# quizprep: exercise=mha
# style: Hugging Face-like module: hidden_shape view + transpose(1, 2), finfo.min additive mask, eager helper
# expect: fail diagnosis=merge-no-transpose
# bug: the (B, H, T, d) output is reshaped to (B, T, d_model) without transposing heads back first
import torch
from torch import nn


def eager_attention(query_states, key_states, value_states, attention_mask, scaling):
    scores = torch.matmul(query_states, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        scores = scores + attention_mask
    probs = nn.functional.softmax(scores, dim=-1)
    return torch.matmul(probs, value_states), probs


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.head_dim = d_model // n_heads
        self.scaling = self.head_dim**-0.5
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _shape(self, states):
        return states.view(*states.shape[:-1], -1, self.head_dim).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        input_shape = query.shape[:-1]
        query_states = self._shape(self.W_q(query))
        key_states = self._shape(self.W_k(key))
        value_states = self._shape(self.W_v(value))
        attention_mask = None
        if mask is not None:
            attention_mask = torch.zeros(mask.shape, dtype=query.dtype, device=query.device)
            attention_mask.masked_fill_(mask.logical_not(), torch.finfo(query.dtype).min)
        context, probs = eager_attention(query_states, key_states, value_states, attention_mask, self.scaling)
        context = context.reshape(*input_shape, -1).contiguous()
        return self.W_o(context), probs
