# quizprep: exercise=mha
# source: ArrowLuo/CLIP4Clip modules/module_cross.py and line/lighthouse (fix commits "repeat → repeat_interleave", CLIP4Clip issue #22, lighthouse PR #77): heads folded into the batch as b * n_head + h, the mask tiled over heads with .repeat
# style: fairseq-like (B·H, T, d) layout: view(B, T, H, d).transpose(1, 2).reshape(B * H, T, d), torch.bmm, the boolean mask broadcast to (B, n, m) and spread over heads along dim 0
# expect: fail diagnosis=mask-heads-tiled
# bug: the mask is spread over the heads with .repeat(n_head, 1, 1), which tiles the batch ([M0, M1, M0, M1]) while the scores are laid out batch-major ([b0h0, b0h1, b1h0, b1h1]): heads read another sample's padding mask. repeat_interleave(n_head, dim=0) is the fix; with batch 1 both agree
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_head = n_heads
        self.d_k = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _fold(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.n_head, self.d_k).transpose(1, 2).reshape(B * self.n_head, T, self.d_k)

    def forward(self, query, key, value, mask=None):
        B, n, _ = query.shape
        m = key.shape[1]
        q, k, v = self._fold(self.W_q(query)), self._fold(self.W_k(key)), self._fold(self.W_v(value))
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(self.d_k)
        if mask is not None:
            attn_mask = mask.expand(B, 1, n, m).reshape(B, n, m).repeat(self.n_head, 1, 1)
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = torch.bmm(weights, v).view(B, self.n_head, n, self.d_k).transpose(1, 2).reshape(B, n, -1)
        return self.W_o(out), weights.view(B, self.n_head, n, m)
