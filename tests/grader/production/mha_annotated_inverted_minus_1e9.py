# quizprep: exercise=mha
# style: the Annotated Transformer's masked_fill(mask == 0, -1e9), written with the comparison flipped
# expect: fail diagnosis=mask-inverted
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.d_k, self.h = d_model // n_heads, n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(p=0.1)

    def forward(self, query, key, value, mask=None):
        nbatches = query.size(0)
        query, key, value = [
            lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
            for lin, x in zip((self.W_q, self.W_k, self.W_v), (query, key, value))
        ]
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask != 0, -1e9)
        p_attn = self.dropout(scores.softmax(dim=-1))
        x = torch.matmul(p_attn, value).transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.W_o(x), p_attn
