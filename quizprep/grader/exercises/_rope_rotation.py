"""The rotation the rope exercise's mistakes are replayed with: RoPE's elementwise formula, as code
writes it, in float64 unless the mistake is precision, with one thing changed."""
from __future__ import annotations

import torch
from torch import Tensor

from quizprep.grader.problem import Case

F32, F64 = torch.float32, torch.float64
HALF, INTERLEAVED = "half", "interleaved"


def pairs(rotary: int, layout: str) -> tuple[Tensor, Tensor]:
    """The feature indices (a, b) of each rotated pair, pair i being (a[i], b[i])."""
    if layout == HALF:
        return torch.arange(rotary // 2), torch.arange(rotary // 2, rotary)
    return torch.arange(0, rotary, 2), torch.arange(1, rotary, 2)


def inverse_frequencies(rotary: int, base: float, exponent: float = 2.0) -> Tensor:
    return base ** (-exponent * torch.arange(rotary // 2, dtype=F64) / rotary)


def simulate(case: Case, *, layout: str | None = None, exponent: float = 2.0, swap: bool = False,
             sign: float = 1.0, from_zero: bool = False, angle_dtype: torch.dtype | None = None,
             cast_positions: bool = True, round_angles: bool = True, whole_head: bool = False,
             written: str | None = None, table: str | None = None, inner: str | None = None) -> dict[str, Tensor]:
    """The elementwise rotation with one mistake, in float64 unless the mistake is precision: pairs read in
    `layout`, written back in `written`, turned by a per-feature `table`'s angles (each defaults to the last),
    that table indexed where each feature sits in the `inner` layout the code permutes x into and back."""
    data = case.data
    x = data["x"].to(F64)
    rotary = x.shape[-1] if whole_head else data["rotary"]
    positions = torch.arange(x.shape[-2]) if from_zero else data["positions"]
    inv_freq = inverse_frequencies(rotary, data["base"], exponent)
    if angle_dtype is None:
        angles = positions.to(F64)[:, None] * inv_freq
    elif round_angles:  # rounded as torch rounds a product of two tensors of that dtype
        held = positions.to(angle_dtype) if cast_positions else positions.to(F32)
        angles = (held.to(F32)[:, None] * inv_freq.to(angle_dtype).to(F32)).to(angle_dtype).to(F64)
    else:  # only the positions held in that dtype (an arange of x.dtype), the product taken in float32
        angles = (positions.to(angle_dtype).to(F32)[:, None] * inv_freq.to(F32)).to(F64)
    cos, sin = angles.cos(), sign * angles.sin()
    if swap:
        cos, sin = sin, cos
    read = layout or data["layout"]
    (a, b), (wa, wb) = pairs(rotary, read), pairs(rotary, written or read)
    place = torch.arange(rotary)  # each feature's place in the code's own layout, which its table indexes
    if inner is not None:
        place[wa], place[wb] = pairs(rotary, inner)
    angle = place % (rotary // 2) if (table or written or read) == HALF else place // 2
    out = x.clone()
    out[..., wa] = x[..., a] * cos[:, angle[wa]] - x[..., b] * sin[:, angle[wa]]
    out[..., wb] = x[..., a] * sin[:, angle[wb]] + x[..., b] * cos[:, angle[wb]]
    return {"out": out}


def layouts_mixed(case: Case) -> list[dict[str, Tensor]]:
    """The other layout where the asked one was needed: its pairs rotated throughout; pairs read in one and
    written back in the other (cat for stack, or the reverse); or per-feature cos and sin tables laid out for
    the other (tiled where repeat_interleave was needed, or the reverse): a pair's features at two angles; or,
    in code that permutes x into the other layout and back, the asked layout's tables indexed there."""
    asked = case.data["layout"]
    other = INTERLEAVED if asked == HALF else HALF
    return [simulate(case, **form) for form in ({"layout": other}, {"written": other}, {"table": other},
                                                {"layout": other, "written": asked}, {"layout": other, "table": asked},
                                                {"inner": other, "table": asked})]
