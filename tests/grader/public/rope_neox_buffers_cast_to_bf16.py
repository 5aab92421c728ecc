# quizprep: exercise=rope
# expect: fail diagnosis=rope-angles-low-precision
# Hugging Face transformers, src/transformers/models/gpt_neox/modeling_gpt_neox.py before inv_freq was computed
# in float32 at every call: `model.to(torch.bfloat16)` also cast the inv_freq buffer, and the cache was then
# built with t = torch.arange(max_seq_len, dtype=self.inv_freq.dtype). Adapter: the buffer cast to x's dtype
# stands for the model's .to(); the interleaved layout is permuted into rotate_half's and back.
from __future__ import annotations

import torch


class GPTNeoXRotaryEmbedding(torch.nn.Module):
    def __init__(self, dim, max_position_embeddings, base=10000, device=None, dtype=torch.float32):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float().to(device) / dim))
        self.register_buffer("inv_freq", inv_freq.to(dtype))  # what model.to(dtype) did to the buffer
        t = torch.arange(max_position_embeddings, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos_cached = emb.cos()
        self.sin_cached = emb.sin()


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    rotary_ndims = x.shape[-1] if rotary_dim is None else rotary_dim
    query_rot, query_pass = x[..., :rotary_ndims], x[..., rotary_ndims:]
    perm = torch.cat([torch.arange(0, rotary_ndims, 2), torch.arange(1, rotary_ndims, 2)]).to(x.device)
    if layout == "interleaved":
        query_rot = query_rot[..., perm]
    dtype = x.dtype if x.dtype in (torch.float16, torch.bfloat16) else torch.float32
    rotary = GPTNeoXRotaryEmbedding(rotary_ndims, int(positions.max()) + 1, base, x.device, dtype)
    cos, sin = rotary.cos_cached[positions], rotary.sin_cached[positions]
    query_rot = (query_rot * cos) + (rotate_half(query_rot) * sin)
    if layout == "interleaved":
        query_rot = query_rot[..., torch.argsort(perm)]
    return torch.cat((query_rot.to(x.dtype), query_pass), dim=-1)
