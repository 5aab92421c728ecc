# quizprep: exercise=masking
# expect: check=causal-square diagnosis=causal-no-diagonal
import torch


def causal_mask(n, m=None):
    m = n if m is None else m
    return torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n - 1)  # BUG


def padding_mask(lengths, max_len):
    return (torch.arange(max_len) < lengths[:, None])[:, None, None, :]
