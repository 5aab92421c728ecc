# quizprep: exercise=mha
# style: Keras/TensorFlow tutorial MultiHeadAttention port: split_heads with reshape + permute, logits += (1 - mask) * -1e9
# expect: fail diagnosis=no-output-projection
# bug: the concatenated heads are returned directly; W_o (the tutorial's "dense") is never applied
import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.num_heads = n_heads
        self.d_model = d_model
        self.depth = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split_heads(self, x, batch_size):
        x = torch.reshape(x, (batch_size, -1, self.num_heads, self.depth))
        return x.permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        batch_size = query.shape[0]
        q = self.split_heads(self.W_q(query), batch_size)
        k = self.split_heads(self.W_k(key), batch_size)
        v = self.split_heads(self.W_v(value), batch_size)
        logits = torch.matmul(q, k.transpose(-1, -2)) / self.depth**0.5
        if mask is not None:
            logits = logits + (1.0 - mask.to(logits.dtype)) * -1e9
        attention_weights = F.softmax(logits, dim=-1)
        scaled_attention = torch.matmul(attention_weights, v).permute(0, 2, 1, 3)
        concat_attention = torch.reshape(scaled_attention, (batch_size, -1, self.d_model))
        return concat_attention, attention_weights
