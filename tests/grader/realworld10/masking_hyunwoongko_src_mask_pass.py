# quizprep: exercise=masking
# source: hyunwoongko/transformer models/model/transformer.py @ 2162327f9f474244a36fc7ca20d7730f20568931 (Transformer.make_src_mask: (src != src_pad_idx).unsqueeze(1).unsqueeze(2); make_trg_mask's trg_sub_mask = torch.tril(torch.ones(trg_len, trg_len)))
# style: the padding mask read off the token ids (!= pad) and given its two singleton axes with unsqueeze(1).unsqueeze(2); the causal mask a tril of ones
# adapter: token ids rebuilt from lengths (position j holds a pad token when j >= lengths[b]), pad index 0; the tril gets diagonal=m - n for queries that are the last n of m positions (the repository has no KV cache); .type(torch.ByteTensor) replaced by .bool(), the contract's dtype
# expect: pass
from __future__ import annotations

import torch

PAD_IDX = 0


def _tokens_from_lengths(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    positions = torch.arange(max_len, device=lengths.device)
    return torch.where(positions[None, :] < lengths[:, None], 1, PAD_IDX)


def make_src_mask(src: torch.Tensor, src_pad_idx: int = PAD_IDX) -> torch.Tensor:
    src_mask = (src != src_pad_idx).unsqueeze(1).unsqueeze(2)
    return src_mask


def causal_mask(n: int, m: int | None = None) -> torch.Tensor:
    m = n if m is None else m
    trg_sub_mask = torch.tril(torch.ones(n, m), diagonal=m - n).bool()
    return trg_sub_mask


def padding_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    return make_src_mask(_tokens_from_lengths(lengths, max_len))
