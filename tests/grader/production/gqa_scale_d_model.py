# quizprep: exercise=gqa
# style: Llama-like GQA whose scores are divided by √d_model
# expect: fail diagnosis=scale-d-model
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.d_model, self.h, self.g, self.d = d_model, n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.d)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(n_heads * self.d, d_model)

    def forward(self, x, mask=None):
        b, t, _ = x.shape
        q = self.W_q(x).view(b, t, self.h, self.d).transpose(1, 2)
        k = self.W_k(x).view(b, t, self.g, self.d).transpose(1, 2).repeat_interleave(self.h // self.g, dim=1)
        v = self.W_v(x).view(b, t, self.g, self.d).transpose(1, 2).repeat_interleave(self.h // self.g, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_model)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.W_o(out.transpose(1, 2).reshape(b, t, -1))
