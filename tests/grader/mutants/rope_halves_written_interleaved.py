# quizprep: exercise=rope
# expect: check=half diagnosis=rope-layout-swapped
# Halves read as rotate_half's pairs (i, i + r/2), rotated right, then written back interleaved:
# stack(...).flatten where cat was needed.
from __future__ import annotations

import torch


def apply_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0, layout: str = "half",
               rotary_dim: int | None = None) -> torch.Tensor:
    r = x.shape[-1] if rotary_dim is None else rotary_dim
    theta = base ** (-torch.arange(r // 2, dtype=torch.float32, device=x.device) * 2 / r)
    angle = positions.float().to(x.device).unsqueeze(-1) * theta
    cos, sin = torch.cos(angle), torch.sin(angle)
    head = x[..., :r].float()
    if layout == "half":
        even, odd = head[..., : r // 2], head[..., r // 2:]
    else:
        even, odd = head[..., 0::2], head[..., 1::2]
    first, second = even * cos - odd * sin, even * sin + odd * cos
    out = torch.stack((first, second), dim=-1).flatten(-2)  # BUG: written back interleaved for both layouts
    return torch.cat((out.to(x.dtype), x[..., r:]), dim=-1)
