# quizprep: exercise=mha
# source: lucidrains/vit-pytorch vit_pytorch/vit.py @ 0ebd4edab94c211eff78406248896588d155a10c (Attention.forward: heads split 'b n (h d) -> b h n d', dots = q @ kᵀ * scale with scale = dim_head ** -0.5, nn.Softmax(dim=-1), merged 'b h n d -> b n (h d)')
# style: einops rearranges written as view/permute (einops is not installed here), nn.Softmax module, scale as a multiplied attribute
# adapter: separate W_q/W_k/W_v for cross-attention instead of the fused to_qkv, the mask filled with finfo.min before the softmax (vit.py has none), no pre-norm, the weights returned
# expect: pass
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.heads = n_heads
        self.scale = (d_model // n_heads) ** -0.5
        self.attend = nn.Softmax(dim=-1)
        self.dropout = nn.Dropout(0.1)
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
        out = torch.matmul(self.dropout(attn), v)
        b, h, n, d = out.shape
        out = out.permute(0, 2, 1, 3).reshape(b, n, h * d)
        return self.W_o(out), attn
