# quizprep: exercise=rope
# source: a one-line slip on karpathy/llama2.c model.py @ 003dca2075fdf641b31ea5b341c1ecf12980cc62 (precompute_freqs_cis returning float32 freqs_cos and freqs_sin, reshape_for_broadcast, apply_rotary_emb in real arithmetic on consecutive pairs)
# style: Meta's interleaved pairs without complex numbers: reshape(..., -1, 2).unbind(-1), cos/sin tables in float32, the result cast back with type_as
# adapter: one tensor instead of the (xq, xk) pair; x moved to llama2.c's (B, n, H, d) and back; the tables indexed by `positions` where Transformer.forward slices [:seqlen] (llama2.c has no KV cache); the first rotary_dim features rotated; the half layout permuted into consecutive pairs and back
# expect: fail diagnosis=rope-layout-swapped
# bug: the flag read the wrong way round (layout == 'interleaved' where 'half' is meant, twice): each layout is rotated in the other's pairs
from __future__ import annotations

import torch


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)  # type: ignore
    freqs = torch.outer(t, freqs).float()  # type: ignore
    freqs_cos = torch.cos(freqs)  # real part
    freqs_sin = torch.sin(freqs)  # imaginary part
    return freqs_cos, freqs_sin


def reshape_for_broadcast(freqs_cis: torch.Tensor, x: torch.Tensor):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(shape)


def apply_rotary_emb(xq: torch.Tensor, freqs_cos: torch.Tensor, freqs_sin: torch.Tensor) -> torch.Tensor:
    # reshape xq to match the complex representation
    xq_r, xq_i = xq.float().reshape(xq.shape[:-1] + (-1, 2)).unbind(-1)
    # reshape freqs_cos and freqs_sin for broadcasting
    freqs_cos = reshape_for_broadcast(freqs_cos, xq_r)
    freqs_sin = reshape_for_broadcast(freqs_sin, xq_r)
    # apply rotation using real numbers
    xq_out_r = xq_r * freqs_cos - xq_i * freqs_sin
    xq_out_i = xq_r * freqs_sin + xq_i * freqs_cos
    # flatten last two dimensions
    xq_out = torch.stack([xq_out_r, xq_out_i], dim=-1).flatten(3)
    return xq_out.type_as(xq)


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    rotary_dim = x.shape[-1] if rotary_dim is None else rotary_dim
    xq = x.transpose(1, 2)  # llama2.c's (bs, seqlen, n_heads, head_dim)
    x_rot, x_pass = xq[..., :rotary_dim], xq[..., rotary_dim:]
    # adapter: half pairs (i, i + r/2) moved next to each other, rotated, moved back
    perm = torch.stack([torch.arange(rotary_dim // 2), torch.arange(rotary_dim // 2, rotary_dim)], -1).flatten()
    perm = perm.to(x.device)
    if layout == "interleaved":
        x_rot = x_rot[..., perm]
    freqs_cos, freqs_sin = precompute_freqs_cis(rotary_dim, int(positions.max()) + 1, base)
    x_rot = apply_rotary_emb(x_rot, freqs_cos.to(x.device)[positions], freqs_sin.to(x.device)[positions])
    if layout == "interleaved":
        x_rot = x_rot[..., torch.argsort(perm)]
    return torch.cat([x_rot, x_pass], dim=-1).transpose(1, 2)
