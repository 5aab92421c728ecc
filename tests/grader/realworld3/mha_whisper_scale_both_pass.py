# quizprep: exercise=mha
# style: Whisper-like attention, d_head ** -0.25 on both q and k
# expect: pass
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_head = n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.W_q(query), self.W_k(key), self.W_v(value)
        scale = (q.shape[-1] // self.n_head) ** -0.25
        q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3) * scale
        k = k.view(*k.shape[:2], self.n_head, -1).permute(0, 2, 3, 1) * scale
        v = v.view(*v.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        qk = q @ k
        if mask is not None:
            qk = qk.masked_fill(~mask, float("-inf"))
        w = qk.float().softmax(dim=-1).to(q.dtype)
        return self.W_o((w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)), w
