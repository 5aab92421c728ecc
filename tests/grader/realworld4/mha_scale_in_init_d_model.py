# quizprep: exercise=mha
# style: scale precomputed in __init__ and applied to q before the matmul, in-place mul_
# expect: fail diagnosis=scale-d-model
# bug: self.scale = d_model ** -0.5 (the whole model width) instead of d_k ** -0.5
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.scale = d_model ** -0.5
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def heads(self, x):
        b, t, c = x.size()
        return x.view(b, t, self.h, c // self.h).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        q = self.heads(self.W_q(query))
        q.mul_(self.scale)
        k = self.heads(self.W_k(key))
        v = self.heads(self.W_v(value))
        w = torch.matmul(q, k.transpose(-1, -2))
        if mask is not None:
            w = w.masked_fill(~mask, float("-inf"))
        w = w.softmax(-1)
        o = torch.matmul(w, v).permute(0, 2, 1, 3).flatten(2)
        return self.W_o(o), w
