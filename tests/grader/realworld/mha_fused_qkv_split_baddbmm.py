# quizprep: exercise=mha
# style: fused projections built in forward (one F.linear over the concatenated weights, then split/chunk), baddbmm with an additive -inf bias
# expect: pass
import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _project(self, query, key, value):
        if query is key and key is value:
            # self-attention: one GEMM for the three projections
            weight = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])
            bias = torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias])
            return F.linear(query, weight, bias).split(self.d_model, dim=-1)
        q = self.W_q(query)
        if key is value:
            weight = torch.cat([self.W_k.weight, self.W_v.weight])
            bias = torch.cat([self.W_k.bias, self.W_v.bias])
            k, v = F.linear(key, weight, bias).chunk(2, dim=-1)
            return q, k, v
        return q, self.W_k(key), self.W_v(value)

    def forward(self, query, key, value, mask=None):
        B, n, _ = query.shape
        m = key.shape[1]
        H, d = self.n_heads, self.d_head
        q, k, v = self._project(query, key, value)
        q = q.reshape(B, n, H, d).transpose(1, 2).reshape(B * H, n, d)
        k = k.reshape(B, m, H, d).transpose(1, 2).reshape(B * H, m, d)
        v = v.reshape(B, m, H, d).transpose(1, 2).reshape(B * H, m, d)

        bias = torch.zeros(B, H, n, m, dtype=q.dtype, device=q.device)
        if mask is not None:
            bias = bias.masked_fill(~mask, float("-inf"))
        scores = torch.baddbmm(bias.reshape(B * H, n, m), q, k.transpose(1, 2), alpha=d**-0.5)
        weights = scores.softmax(dim=-1)
        out = torch.bmm(weights, v).reshape(B, H, n, d).transpose(1, 2).reshape(B, n, self.d_model)
        return self.W_o(out), weights.reshape(B, H, n, m)
