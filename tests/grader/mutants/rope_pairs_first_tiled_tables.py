# quizprep: exercise=rope
# expect: check=half diagnosis=rope-layout-swapped
# Works in consecutive pairs only: the half layout is permuted into them and back, right; but the
# cos/sin tables are tiled (the half layout's cat([θ, θ])) in those consecutive-pair coordinates.
from __future__ import annotations

import torch


def _to_pairs(t: torch.Tensor) -> torch.Tensor:
    """(i, i + r/2) → (2i, 2i + 1)."""
    return t.unflatten(-1, (2, -1)).transpose(-1, -2).flatten(-2)


def _from_pairs(t: torch.Tensor) -> torch.Tensor:
    return t.unflatten(-1, (-1, 2)).transpose(-1, -2).flatten(-2)


def apply_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0, layout: str = "half",
               rotary_dim: int | None = None) -> torch.Tensor:
    r = x.shape[-1] if rotary_dim is None else rotary_dim
    theta = base ** (-torch.arange(0, r, 2, dtype=torch.float32, device=x.device) / r)
    angles = positions.to(device=x.device, dtype=torch.float32)[:, None] * theta
    table = angles.repeat(1, 2)  # BUG: tiled, where consecutive pairs need angles.repeat_interleave(2, -1)
    cos, sin = table.cos(), table.sin()
    part = x[..., :r].float()
    if layout == "half":
        part = _to_pairs(part)
    even, odd = part[..., 0::2], part[..., 1::2]
    turned = torch.stack((-odd, even), dim=-1).flatten(-2)
    out = part * cos + turned * sin
    if layout == "half":
        out = _from_pairs(out)
    return torch.cat((out.to(x.dtype), x[..., r:]), dim=-1)
