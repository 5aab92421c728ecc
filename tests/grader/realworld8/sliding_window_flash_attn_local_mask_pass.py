# quizprep: exercise=sliding-window
# source: Dao-AILab/flash-attention tests/test_flash_attn.py (construct_local_mask: row_idx = arange(seqlen_q)[:, None], col_idx = arange(seqlen_k); masked where col_idx > min(row_idx + sk - sq + window_size[1], sk) or col_idx < row_idx + sk - sq - window_size[0]; attention_ref fills the local mask with -inf)
# style: the reference's (left, right) window convention, True = masked, bottom-right aligned rows
# adapter: a window of W keys is window_size = (W - 1, 0); the exercise's mask (True = may attend) is the negation; attention_ref's einsum/softmax/einsum without dropout or padding
# expect: pass
import math

import torch


def construct_local_mask(seqlen_q, seqlen_k, window_size, device=None):
    row_idx = torch.arange(seqlen_q, device=device, dtype=torch.long)[:, None]
    col_idx = torch.arange(seqlen_k, device=device, dtype=torch.long)
    sk, sq = seqlen_k, seqlen_q
    sk_full = torch.full_like(col_idx, sk)
    return torch.logical_or(
        col_idx > torch.minimum(row_idx + sk - sq + window_size[1], sk_full),
        col_idx < row_idx + sk - sq - window_size[0],
    )


def sliding_window_mask(n, window, m=None):
    m = n if m is None else m
    return ~construct_local_mask(n, m, (window - 1, 0))


def sliding_window_attention(q, k, v, window):
    scores = torch.einsum("bhtd,bhsd->bhts", q / math.sqrt(q.shape[-1]), k)
    local_mask = construct_local_mask(q.shape[-2], k.shape[-2], (window - 1, 0), device=q.device)
    scores = scores.masked_fill(local_mask, float("-inf"))
    attention = torch.softmax(scores, dim=-1).to(v.dtype)
    return torch.einsum("bhts,bhsd->bhtd", attention, v)
