# quizprep: exercise=mha
# Annotated-Transformer habit: mask.unsqueeze(1) for the head axis, on masks that already have it
import math
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h, self.d = n_heads, d_model // n_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, query, key, value, mask=None):
        b = query.size(0)
        pairs = ((self.W_q, query), (self.W_k, key), (self.W_v, value))
        q, k, v = (proj(x).view(b, -1, self.h, self.d).transpose(1, 2) for proj, x in pairs)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            mask = mask.unsqueeze(1)
            scores = scores.masked_fill(mask == 0, float("-inf"))
        w = scores.softmax(-1)
        return self.W_o((w @ v).transpose(1, 2).reshape(b, -1, self.h * self.d)), w
