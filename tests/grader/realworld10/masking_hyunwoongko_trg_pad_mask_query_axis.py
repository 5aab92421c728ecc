# quizprep: exercise=masking
# source: hyunwoongko/transformer models/model/transformer.py @ 2162327f9f474244a36fc7ca20d7730f20568931 (Transformer.make_trg_mask: trg_pad_mask = (trg != trg_pad_idx).unsqueeze(1).unsqueeze(3); trg_sub_mask = torch.tril(torch.ones(trg_len, trg_len)); trg_mask = trg_pad_mask & trg_sub_mask)
# style: the padding mask read off the token ids (!= pad) and given its singleton axes with unsqueeze; the causal mask a tril of ones
# adapter: token ids rebuilt from lengths (position j holds a pad token when j >= lengths[b]), pad index 0; padding_mask is make_trg_mask's trg_pad_mask, the decoder's padding mask; the tril gets diagonal=m - n for queries that are the last n of m positions (the repository has no KV cache); .type(torch.ByteTensor) replaced by .bool(), the contract's dtype
# expect: fail diagnosis=padding-on-queries
# bug: as published: unsqueeze(1).unsqueeze(3) gives (B, 1, max_len, 1), so padding hides query rows instead of key columns; hyunwoongko/transformer PR #40 "fix(model): attention pad mask" (open) moves it to unsqueeze(1).unsqueeze(2)
from __future__ import annotations

import torch

PAD_IDX = 0


def _tokens_from_lengths(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    positions = torch.arange(max_len, device=lengths.device)
    return torch.where(positions[None, :] < lengths[:, None], 1, PAD_IDX)


def causal_mask(n: int, m: int | None = None) -> torch.Tensor:
    m = n if m is None else m
    trg_sub_mask = torch.tril(torch.ones(n, m), diagonal=m - n).bool()
    return trg_sub_mask


def padding_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    trg = _tokens_from_lengths(lengths, max_len)
    trg_pad_mask = (trg != PAD_IDX).unsqueeze(1).unsqueeze(3)
    return trg_pad_mask
