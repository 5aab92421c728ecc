# quizprep: exercise=rope
# source: EleutherAI/gpt-neox megatron/model/positional_embeddings.py @ 007003aae8d00e9526fa7babf564ea4751d64018 (RotaryEmbedding.forward builds t = torch.arange(x.shape[seq_dim]); rotate_half; apply_rotary_pos_emb), with the rotary_ndims split of its transformer.py (query_rot = query_layer[..., :self.rotary_ndims])
# style: Megatron's sequence-first [sq, b, np, hn] layout, cos/sin cached per sequence length and broadcast as [sq, 1, 1, hn]
# adapter: x permuted to [sq, b, np, hn] and back; rotated in float32 and cast back; the interleaved layout permuted into halves and back
# expect: fail diagnosis=rope-offset-ignored
# bug: as published in this version: the angles come from torch.arange(seq_len), so a decode step after T cached tokens is rotated as position 0 (the repo later added an offset argument to apply_rotary_pos_emb)
from __future__ import annotations

import torch


class RotaryEmbedding(torch.nn.Module):

    def __init__(self, dim, base=10000):
        super().__init__()
        inv_freq = 1. / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer('inv_freq', inv_freq)
        self.seq_len_cached = None
        self.cos_cached = None
        self.sin_cached = None

    def forward(self, x, seq_dim=1):
        seq_len = x.shape[seq_dim]
        if seq_len != self.seq_len_cached:
            self.seq_len_cached = seq_len
            t = torch.arange(x.shape[seq_dim], device=x.device).type_as(self.inv_freq)
            freqs = torch.einsum('i,j->ij', t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1).to(x.device)
            self.cos_cached = emb.cos()[:, None, None, :]
            self.sin_cached = emb.sin()[:, None, None, :]
        return self.cos_cached, self.sin_cached


# rotary pos emb helpers:

def rotate_half(x):
    x1, x2 = x[..., :x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=x1.ndim - 1)  # dim=-1 triggers a bug in earlier torch versions


def apply_rotary_pos_emb(q, cos, sin):
    return (q * cos) + (rotate_half(q) * sin)


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    rotary_ndims = x.shape[-1] if rotary_dim is None else rotary_dim
    query_layer = x.permute(2, 0, 1, 3)  # Megatron's [sq, b, np, hn]
    query_rot, query_pass = query_layer[..., :rotary_ndims], query_layer[..., rotary_ndims:]
    # adapter: interleaved pairs (2i, 2i+1) moved to (i, i + r/2), rotated, moved back
    perm = torch.cat([torch.arange(0, rotary_ndims, 2), torch.arange(1, rotary_ndims, 2)]).to(x.device)
    if layout == "interleaved":
        query_rot = query_rot[..., perm]
    rotary_emb = RotaryEmbedding(rotary_ndims, base=base).to(x.device)
    cos, sin = rotary_emb(query_rot.float(), seq_dim=0)
    query_rot = apply_rotary_pos_emb(query_rot.float(), cos, sin).to(x.dtype)
    if layout == "interleaved":
        query_rot = query_rot[..., torch.argsort(perm)]
    return torch.cat((query_rot, query_pass), dim=-1).permute(1, 2, 0, 3)
