# quizprep: exercise=sliding-window
# expect: check=mask-cache diagnosis=window-edge-no-offset
# A square causal mask over all m positions, its last n rows taken; then a two-sided band of width W
# cut from those n rows by their row index (triu·tril), not by their positions.
import torch
import torch.nn.functional as F


def sliding_window_mask(n, window, m=None):
    m = n if m is None else m
    causal = torch.ones(m, m, dtype=torch.bool).tril()[m - n:]
    ones = torch.ones(n, m, dtype=torch.bool)
    band = ones.triu(1 - window) & ones.tril(window - 1)  # BUG: diagonals of the n×m rows, not of the positions
    return causal & band


def sliding_window_attention(q, k, v, window):
    mask = sliding_window_mask(q.shape[-2], window, k.shape[-2]).to(q.device)
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * q.shape[-1] ** -0.5
    return F.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1) @ v
