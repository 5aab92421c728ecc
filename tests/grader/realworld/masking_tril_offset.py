# quizprep: exercise=masking
# style: torch.tril with a diagonal offset for the KV cache; padding built with unsqueeze and view
# expect: pass
import torch


def causal_mask(n, m=None):
    m = n if m is None else m
    return torch.tril(torch.ones(n, m, dtype=torch.bool), diagonal=m - n)


def padding_mask(lengths, max_len):
    keys = torch.arange(max_len, device=lengths.device).unsqueeze(0)
    mask = lengths.unsqueeze(-1) > keys
    return mask.view(lengths.shape[0], 1, 1, max_len)
