# quizprep: exercise=rope
# expect: check=interleaved diagnosis=rope-layout-swapped
# rotate_every_two on consecutive pairs, but the per-feature cos/sin tables are Hugging Face's
# cat([freqs, freqs]) (tiled) where repeat_interleave was needed: a pair's two features get two angles.
from __future__ import annotations

import torch


def rotate_half(t: torch.Tensor) -> torch.Tensor:
    t1, t2 = t.chunk(2, dim=-1)
    return torch.cat([-t2, t1], dim=-1)


def rotate_every_two(t: torch.Tensor) -> torch.Tensor:
    t1, t2 = t[..., 0::2], t[..., 1::2]
    return torch.stack([-t2, t1], dim=-1).flatten(-2)


def apply_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0, layout: str = "half",
               rotary_dim: int | None = None) -> torch.Tensor:
    r = x.shape[-1] if rotary_dim is None else rotary_dim
    inv_freq = 1.0 / base ** (torch.arange(0, r, 2, device=x.device).float() / r)
    freqs = torch.outer(positions.to(device=x.device, dtype=torch.float32), inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)  # (n, r)  # BUG: the half layout's table for both layouts
    cos, sin = emb.cos(), emb.sin()
    rot, rest = x[..., :r].float(), x[..., r:]
    turn = rotate_half if layout == "half" else rotate_every_two
    rotated = rot * cos + turn(rot) * sin
    return torch.cat([rotated.to(x.dtype), rest], dim=-1)
