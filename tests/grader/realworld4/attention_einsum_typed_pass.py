# quizprep: exercise=attention
# style: einsum with ellipsis batch dims, type hints, finfo.min fill, a small helper for the scale
# expect: pass
from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor


def _inv_sqrt(d: int) -> float:
    return d ** -0.5


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor] = None
) -> Tuple[Tensor, Tensor]:
    scores: Tensor = torch.einsum("...id,...jd->...ij", q, k) * _inv_sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), torch.finfo(scores.dtype).min)
    weights: Tensor = scores.softmax(dim=-1)
    out: Tensor = torch.einsum("...ij,...jd->...id", weights, v)
    return out, weights
