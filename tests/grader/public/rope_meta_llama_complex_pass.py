# quizprep: exercise=rope
# expect: pass
# Meta's meta-llama/llama, llama/model.py: precompute_freqs_cis (torch.polar in float32), reshape_for_broadcast
# and apply_rotary_emb (view_as_complex on consecutive pairs, multiply, view_as_real) on (B, n, H, d), with
# freqs_cis[start_pos : start_pos + seqlen] as in Attention.forward. Adapter: transposes to (B, n, H, d), keeps
# the positions the caller gives, and permutes the half layout into consecutive pairs and back.
from __future__ import annotations

import torch


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)  # type: ignore
    freqs = torch.outer(t, freqs).float()  # type: ignore
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
    return freqs_cis


def reshape_for_broadcast(freqs_cis: torch.Tensor, x: torch.Tensor):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq: torch.Tensor, freqs_cis: torch.Tensor) -> torch.Tensor:
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq)


def apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None):
    rotary_dim = x.shape[-1] if rotary_dim is None else rotary_dim
    xq = x.transpose(1, 2)
    x_rot, x_pass = xq[..., :rotary_dim], xq[..., rotary_dim:]
    perm = torch.stack([torch.arange(rotary_dim // 2), torch.arange(rotary_dim // 2, rotary_dim)], -1).flatten()
    if layout == "half":
        x_rot = x_rot[..., perm.to(x.device)]
    freqs_cis = precompute_freqs_cis(rotary_dim, int(positions.max()) + 1, base).to(x.device)[positions]
    x_rot = apply_rotary_emb(x_rot, freqs_cis)
    if layout == "half":
        x_rot = x_rot[..., torch.argsort(perm).to(x.device)]
    return torch.cat([x_rot, x_pass], dim=-1).transpose(1, 2)
