# quizprep: exercise=rope
# source: lucidrains/rotary-embedding-torch rotary_embedding_torch/rotary_embedding_torch.py @ 02a5d0747249183789eef722ecbcd637a5dce88d (rotate_half on consecutive pairs, apply_rotary_emb with start_index and t_left/t/t_right, RotaryEmbedding.forward: einsum('..., f -> ... f') then repeat '(n r)', get_seq_pos)
# style: interleaved pairs with frequencies repeated per feature, cos/sin applied to the slice t[..., start:end] and concatenated with the untouched features
# adapter: einops' rearrange/repeat spelled with reshape and repeat_interleave; the module reduced to its 'lang' frequencies; `positions` given to forward as rotate_queries_or_keys gives get_seq_pos's result; the result cast back with .type(q.dtype) as rotate_queries_with_cached_keys does; the half layout permuted into consecutive pairs and back
# expect: pass
from __future__ import annotations

import torch
from torch import einsum, nn


def rotate_half(x):
    x = x.reshape(*x.shape[:-1], -1, 2)  # rearrange(x, '... (d r) -> ... d r', r = 2)
    x1, x2 = x.unbind(dim=-1)
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)  # rearrange(x, '... d r -> ... (d r)')


def apply_rotary_emb(freqs, t, start_index=0, scale=1., seq_dim=-2):
    rot_dim = freqs.shape[-1]
    end_index = start_index + rot_dim

    assert rot_dim <= t.shape[-1], f'feature dimension {t.shape[-1]} is not of sufficient size to rotate in all the positions {rot_dim}'

    t_left, t, t_right = t[..., :start_index], t[..., start_index:end_index], t[..., end_index:]
    t = (t * freqs.cos() * scale) + (rotate_half(t) * freqs.sin() * scale)
    return torch.cat((t_left, t, t_right), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, theta=10000):
        super().__init__()
        freqs = 1. / (theta ** (torch.arange(0, dim, 2)[:(dim // 2)].float() / dim))
        self.freqs = nn.Parameter(freqs, requires_grad=False)

    def get_seq_pos(self, positions, dtype):
        return positions.to(dtype)

    def forward(self, t):
        freqs = self.freqs
        freqs = einsum('..., f -> ... f', t.type(freqs.dtype), freqs)
        return freqs.repeat_interleave(2, dim=-1)  # repeat(freqs, '... n -> ... (n r)', r = 2)


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    rotary_dim = x.shape[-1] if rotary_dim is None else rotary_dim
    # adapter: half pairs (i, i + r/2) moved next to each other, rotated, moved back
    perm = torch.stack([torch.arange(rotary_dim // 2), torch.arange(rotary_dim // 2, rotary_dim)], -1).flatten()
    perm = torch.cat([perm, torch.arange(rotary_dim, x.shape[-1])]).to(x.device)
    if layout == "half":
        x = x[..., perm]
    rotary = RotaryEmbedding(rotary_dim, theta=base).to(x.device)
    freqs = rotary.forward(rotary.get_seq_pos(positions, torch.float32))
    rotated = apply_rotary_emb(freqs, x).type(x.dtype)
    if layout == "half":
        rotated = rotated[..., torch.argsort(perm)]
    return rotated
