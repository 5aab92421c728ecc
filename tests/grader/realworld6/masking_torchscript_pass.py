# quizprep: exercise=masking
# style: TorchScript-ready helpers (@torch.jit.script, Optional[int] refined with an `if ... is None`, type-annotated locals), masks from broadcast comparisons of aranges
# expect: pass
from typing import Optional

import torch


@torch.jit.script
def causal_mask(n: int, m: Optional[int] = None) -> torch.Tensor:
    total: int = n
    if m is not None:
        total = m
    query_pos = torch.arange(n).unsqueeze(1) + (total - n)
    key_pos = torch.arange(total).unsqueeze(0)
    return key_pos <= query_pos


@torch.jit.script
def padding_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    positions = torch.arange(max_len, device=lengths.device)
    keep = positions.unsqueeze(0) < lengths.unsqueeze(1)
    return keep.unsqueeze(1).unsqueeze(2)
