# quizprep: exercise=rope
# expect: check=partial diagnosis=rope-partial-ignored unread=rotary_dim
# rotary_dim ignored: the whole head is rotated.
from __future__ import annotations

import torch


def apply_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0, layout: str = "half",
               rotary_dim: int | None = None) -> torch.Tensor:
    r = x.shape[-1]  # BUG
    inv_freq = base ** (-torch.arange(0, r, 2, dtype=torch.float32, device=x.device) / r)
    angles = positions.to(torch.float32)[:, None] * inv_freq  # (n, r/2)
    cos, sin = angles.cos(), angles.sin()
    rot, rest = x[..., :r].float(), x[..., r:]
    if layout == "half":
        a, b = rot[..., : r // 2], rot[..., r // 2:]
        rotated = torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    else:
        a, b = rot[..., 0::2], rot[..., 1::2]
        rotated = torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
    return torch.cat([rotated.to(x.dtype), rest], dim=-1)
