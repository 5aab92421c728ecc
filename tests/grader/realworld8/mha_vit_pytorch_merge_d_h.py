# quizprep: exercise=mha
# source: lucidrains/vit-pytorch vit_pytorch/vit.py @ 0ebd4edab94c211eff78406248896588d155a10c (Attention.forward), with a one-line slip in the merge pattern: 'b h n d -> b n (d h)' for 'b h n d -> b n (h d)'
# style: einops rearranges written as view/permute, nn.Softmax module, scale as a multiplied attribute
# adapter: as mha_vit_pytorch_pass.py
# expect: fail diagnosis=merge-interleaved
# bug: the merge puts the head axis innermost ((d h), permute(0, 2, 3, 1)): feature j·H + h of the merged output comes from head h, so W_o reads the heads' features interleaved
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.heads = n_heads
        self.scale = (d_model // n_heads) ** -0.5
        self.attend = nn.Softmax(dim=-1)
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model)

    def _split(self, t):
        b, n, hd = t.shape
        return t.view(b, n, self.heads, hd // self.heads).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        q, k, v = self._split(self.W_q(query)), self._split(self.W_k(key)), self._split(self.W_v(value))
        dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        if mask is not None:
            dots = dots.masked_fill(~mask, torch.finfo(dots.dtype).min)
        attn = self.attend(dots)
        out = torch.matmul(attn, v)
        b, h, n, d = out.shape
        out = out.permute(0, 2, 3, 1).reshape(b, n, d * h)
        return self.W_o(out), attn
