# quizprep: exercise=sliding-window
# source: mistralai/mistral-inference one_file_ref.py @ 215fc80d4a00177854b51a93fd3d455094f0e085 (Transformer.forward: mask = tril(full((seqlen, seqlen), 1), diagonal=0); "make the mask banded to account for sliding window": mask = triu(mask, diagonal=-self.args.sliding_window); mask = torch.log(mask); Attention.forward: scores = matmul(query, key.transpose(2, 3)) * scale; scores += mask; softmax(scores.float()).type_as(query))
# style: a 0/1 band built with tril then triu and turned into an additive 0/-inf mask by torch.log; softmax in float32, cast back with type_as
# adapter: the square (seqlen, seqlen) band generalised to (n, m) by moving both diagonals by m - n (the reference only masks the prompt; its decode step relies on the rotating cache of sliding_window slots); the reference's rotating cache, RoPE and projections left out
# expect: fail diagnosis=window-wide
# bug: as published: triu(..., diagonal=-sliding_window) keeps key p - W, so a full window holds W + 1 keys; Hugging Face's port fixed the same line to past_key_values_length - sliding_window + 1 (huggingface/transformers PR #26792, "this corrects a bug that was in Mistral's windowed attention")
from __future__ import annotations

import torch


def _band(seqlen_q: int, seqlen_k: int, sliding_window: int, dtype, device) -> torch.Tensor:
    offset = seqlen_k - seqlen_q
    tensor = torch.full((seqlen_q, seqlen_k), dtype=dtype, fill_value=1, device=device)
    mask = torch.tril(tensor, diagonal=offset).to(dtype)
    # make the mask banded to account for sliding window
    mask = torch.triu(mask, diagonal=offset - sliding_window)
    return mask


def sliding_window_mask(n: int, window: int, m: int | None = None) -> torch.Tensor:
    m = n if m is None else m
    return _band(n, m, window, torch.float32, None) == 1


def sliding_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    scale = q.shape[-1] ** -0.5
    mask = torch.log(_band(q.shape[-2], k.shape[-2], window, q.dtype, q.device))
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    scores += mask[None, None, ...]
    scores = scores.float()
    scores = torch.nn.functional.softmax(scores, dim=-1).type_as(q)
    return torch.matmul(scores, v)
