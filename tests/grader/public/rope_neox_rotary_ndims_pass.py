# quizprep: exercise=rope
# expect: pass
# Hugging Face transformers, src/transformers/models/gpt_neox/modeling_gpt_neox.py (v4.3x): RotaryEmbedding with
# cos_cached/sin_cached built up to max_seq_len in float32, indexed by position_ids in apply_rotary_pos_emb;
# GPTNeoXAttention splits query_rot = query[..., : self.rotary_ndims] and query_pass. Adapter: the interleaved
# layout is permuted into rotate_half's and back.
from __future__ import annotations

import torch


class GPTNeoXRotaryEmbedding(torch.nn.Module):
    def __init__(self, dim, max_position_embeddings, base=10000, device=None):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float().to(device) / dim))
        self.register_buffer("inv_freq", inv_freq)
        self.max_seq_len_cached = max_position_embeddings
        t = torch.arange(self.max_seq_len_cached, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos_cached = emb.cos()[None, None, :, :]
        self.sin_cached = emb.sin()[None, None, :, :]

    def forward(self, x, seq_len=None):
        return self.cos_cached[:seq_len, ...].to(x.device), self.sin_cached[:seq_len, ...].to(x.device)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, cos, sin, position_ids):
    gather_indices = position_ids[:, None, :, None]  # [bs, 1, seq_len, 1]
    gather_indices = gather_indices.repeat(1, cos.shape[1], 1, cos.shape[3])
    cos = torch.gather(cos.repeat(gather_indices.shape[0], 1, 1, 1), 2, gather_indices)
    sin = torch.gather(sin.repeat(gather_indices.shape[0], 1, 1, 1), 2, gather_indices)
    return (q * cos) + (rotate_half(q) * sin)


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    rotary_ndims = x.shape[-1] if rotary_dim is None else rotary_dim
    query_rot, query_pass = x[..., :rotary_ndims], x[..., rotary_ndims:]
    perm = torch.cat([torch.arange(0, rotary_ndims, 2), torch.arange(1, rotary_ndims, 2)]).to(x.device)
    if layout == "interleaved":
        query_rot = query_rot[..., perm]
    rotary = GPTNeoXRotaryEmbedding(rotary_ndims, int(positions.max()) + 1, base=base, device=x.device)
    cos, sin = rotary(x, seq_len=int(positions.max()) + 1)
    position_ids = positions[None, :].expand(x.shape[0], -1)
    query_rot = apply_rotary_pos_emb(query_rot.float(), cos, sin, position_ids)
    if layout == "interleaved":
        query_rot = query_rot[..., torch.argsort(perm)]
    return torch.cat((query_rot.to(x.dtype), query_pass), dim=-1)
