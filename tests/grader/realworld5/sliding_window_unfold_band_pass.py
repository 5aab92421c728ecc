# quizprep: exercise=sliding-window
# style: banded attention without an n × m matrix: keys left-padded with W − 1 rows and cut with unfold into one window per query, einsum over the window axis
# expect: pass
import math

import torch
import torch.nn.functional as F


def sliding_window_mask(n: int, window: int, m: int | None = None) -> torch.Tensor:
    m = n if m is None else m
    pos = torch.arange(n).unsqueeze(-1) + (m - n)
    keys = torch.arange(m)
    return (keys <= pos) & (keys > pos - window)


def sliding_window_attention(q, k, v, window):
    n, m = q.shape[-2], k.shape[-2]
    w = min(window, m)
    # after padding, window s covers padded rows s .. s + w - 1, i.e. keys s - w + 1 .. s
    k_win = F.pad(k, (0, 0, w - 1, 0)).unfold(-2, w, 1)[..., m - n:, :, :]  # (B, H, n, d, w)
    v_win = F.pad(v, (0, 0, w - 1, 0)).unfold(-2, w, 1)[..., m - n:, :, :]  # (B, H, n, d_v, w)
    scores = torch.einsum("bhnd,bhndw->bhnw", q, k_win) / math.sqrt(q.shape[-1])
    pos = torch.arange(m - n, m, device=q.device).unsqueeze(-1)
    key_index = pos - w + 1 + torch.arange(w, device=q.device)
    scores = scores.masked_fill(key_index < 0, float("-inf"))
    weights = torch.softmax(scores.to(torch.promote_types(q.dtype, torch.float32)), dim=-1).to(q.dtype)
    return torch.einsum("bhnw,bhndw->bhnd", weights, v_win)
