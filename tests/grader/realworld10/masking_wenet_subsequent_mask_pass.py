# quizprep: exercise=masking
# source: wenet-e2e/wenet wenet/utils/mask.py @ 0f46608ce7bca55ec8b75bd66e0037db483b2c25 (subsequent_mask: arange.expand(size, size) <= arange.unsqueeze(-1); make_pad_mask: seq_range_expand >= lengths.unsqueeze(-1); make_non_pad_mask = ~make_pad_mask)
# style: comparisons of expanded aranges rather than tril; the padding mask built as "is padding" and negated
# adapter: subsequent_mask is square (WeNet's decoder recomputes it for the whole prefix), so the last n of its m rows are taken; make_non_pad_mask's (B, max_len) given WeNet's own unsqueeze(1) and one more for (B, 1, 1, max_len)
# expect: pass
from __future__ import annotations

import torch


def subsequent_mask(size: int, device: torch.device = torch.device("cpu")) -> torch.Tensor:
    arange = torch.arange(size, device=device)
    mask = arange.expand(size, size)
    arange = arange.unsqueeze(-1)
    mask = mask <= arange
    return mask


def make_pad_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    batch_size = lengths.size(0)
    max_len = torch.tensor(max_len, dtype=lengths.dtype, device=lengths.device)
    seq_range = torch.arange(0, max_len, dtype=torch.int64, device=lengths.device)
    seq_range_expand = seq_range.unsqueeze(0).expand(batch_size, max_len)
    seq_length_expand = lengths.unsqueeze(-1)
    mask = seq_range_expand >= seq_length_expand
    return mask


def make_non_pad_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    return ~make_pad_mask(lengths, max_len)


def causal_mask(n: int, m: int | None = None) -> torch.Tensor:
    m = n if m is None else m
    return subsequent_mask(m)[m - n:]


def padding_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    return make_non_pad_mask(lengths, max_len).unsqueeze(1).unsqueeze(1)
