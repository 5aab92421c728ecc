# quizprep: exercise=mha
# style: Hugging Face-like eager attention: hidden_shape view + transpose(1, 2), finfo.min additive mask, softmax in (at least) float32 then .to(query.dtype)
# expect: pass
# note: softmax dtype is promote_types(dtype, float32): the unguarded dtype=torch.float32 would round float64 inputs (~1e-7 error)
import torch
from torch import nn


def eager_attention(module, query_states, key_states, value_states, attention_mask, scaling, dropout=0.0):
    scores = torch.matmul(query_states, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        scores = scores + attention_mask
    softmax_dtype = torch.promote_types(query_states.dtype, torch.float32)
    probs = nn.functional.softmax(scores, dim=-1, dtype=softmax_dtype).to(query_states.dtype)
    probs = nn.functional.dropout(probs, p=dropout, training=module.training)
    context = torch.matmul(probs, value_states).transpose(1, 2).contiguous()
    return context, probs


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.num_heads = n_heads
        self.head_dim = d_model // n_heads
        self.scaling = self.head_dim**-0.5
        self.attention_dropout = 0.0
        self.W_q = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.W_k = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.W_v = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.W_o = nn.Linear(n_heads * self.head_dim, d_model, bias=False)

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

        dropout = self.attention_dropout if self.training else 0.0
        context, probs = eager_attention(
            self, query_states, key_states, value_states, attention_mask, self.scaling, dropout
        )
        return self.W_o(context.reshape(*input_shape, -1)), probs
