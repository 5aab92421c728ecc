"""Exercise: causal and padding masks.

    causal_mask(n, m=None) -> bool tensor (n, m)
    padding_mask(lengths, max_len) -> bool tensor (B, 1, 1, max_len)

Convention: True = this query MAY attend to this key.

causal_mask: m defaults to n. With m > n the n queries are the LAST n of m positions (decoding
with a KV cache: m - n tokens are already cached), so query i sits at position m - n + i and may
attend to keys 0 .. m - n + i — itself included.

padding_mask: `lengths` is a LongTensor (B,) of true sequence lengths; key position j of
sequence b is True when j < lengths[b]. The two singleton dimensions let it broadcast against
scores of shape (B, H, n, max_len). Return it on the device of `lengths`.

What the interviewer expects you to say:
- a token attends to itself (the diagonal is kept);
- with a KV cache, the mask is offset: new queries see every cached key;
- padding hides keys (columns), not queries; padded query rows are simply ignored downstream.

Check your work:  quizprep grade masking.py
"""
from __future__ import annotations

import torch


def causal_mask(n: int, m: int | None = None) -> torch.Tensor:
    raise NotImplementedError


def padding_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    raise NotImplementedError
