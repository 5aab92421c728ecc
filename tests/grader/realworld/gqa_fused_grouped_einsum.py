# quizprep: exercise=gqa
# style: fused QKV in forward (F.linear over the concatenated weights, split into [H*d, KV*d, KV*d]), grouped einsum without repeating K/V, nn.Dropout(p)
# expect: pass
import torch
import torch.nn.functional as F
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads, dropout=0.1):
        super().__init__()
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.d_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.d_head, bias=False)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d_head, bias=False)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d_head, bias=False)
        self.W_o = nn.Linear(n_heads * self.d_head, d_model, bias=False)
        self.attn_drop = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        H, KV, d = self.n_heads, self.n_kv_heads, self.d_head
        G = H // KV
        w_qkv = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight], dim=0)
        q, k, v = F.linear(x, w_qkv).split([H * d, KV * d, KV * d], dim=-1)
        # query head h = kv * G + g reads KV head kv
        q = q.view(B, T, KV, G, d).permute(0, 2, 3, 1, 4)
        k = k.view(B, T, KV, d).transpose(1, 2)
        v = v.view(B, T, KV, d).transpose(1, 2)
        scores = torch.einsum("bkgid,bkjd->bkgij", q, k) * d**-0.5
        if mask is not None:
            mask = mask.expand(B, H, T, T).reshape(B, KV, G, T, T)
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        attn = self.attn_drop(scores.softmax(dim=-1))
        out = torch.einsum("bkgij,bkjd->bkgid", attn, v)
        out = out.permute(0, 3, 1, 2, 4).reshape(B, T, H * d)
        return self.W_o(out)
