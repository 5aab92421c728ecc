# quizprep: exercise=mha
# style: Whisper-like attention that splits the scale between q and k
# expect: fail diagnosis=scale-one-side
# bug: only q is multiplied by d_head ** -0.25; k is left unscaled
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

    def qkv_attention(self, q, k, v, mask):
        n_batch, n_ctx, n_state = q.shape
        scale = (n_state // self.n_head) ** -0.25
        q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3) * scale
        k = k.view(*k.shape[:2], self.n_head, -1).permute(0, 2, 3, 1)
        v = v.view(*v.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        qk = q @ k
        if mask is not None:
            qk = qk.masked_fill(~mask, float("-inf"))
        w = qk.float().softmax(dim=-1).to(q.dtype)
        return (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2), w

    def forward(self, query, key, value, mask=None):
        out, weights = self.qkv_attention(self.W_q(query), self.W_k(key), self.W_v(value), mask)
        return self.W_o(out), weights
