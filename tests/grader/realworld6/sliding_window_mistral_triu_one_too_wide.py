# quizprep: exercise=sliding-window
# style: Mistral reference code: a full boolean matrix, torch.tril with the cache offset for causality, then torch.triu(mask, diagonal=offset - sliding_window) for the window; attention with masked_fill(-inf) and a float32 softmax
# expect: fail diagnosis=window-wide
# bug: triu's diagonal is one too low: diagonal = (m - n) - window keeps key j when j >= p - window, so each query sees window + 1 keys (itself and the W previous ones) instead of W; the contract's window is p - W < j <= p
import torch


def sliding_window_mask(n, window, m=None):
    m = n if m is None else m
    offset = m - n
    mask = torch.full((n, m), True)
    mask = torch.tril(mask, diagonal=offset)
    mask = torch.triu(mask, diagonal=offset - window)
    return mask


def sliding_window_attention(q, k, v, window):
    n, m = q.shape[-2], k.shape[-2]
    mask = sliding_window_mask(n, window, m).to(q.device)
    scores = torch.matmul(q, k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
    scores = scores.masked_fill(~mask, float("-inf"))
    probs = torch.softmax(scores.float(), dim=-1).type_as(q)
    return torch.matmul(probs, v)
