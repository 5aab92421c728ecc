# quizprep: exercise=masking
# expect: check=padding diagnosis=padding-off-by-one
import torch


def causal_mask(n, m=None):
    m = n if m is None else m
    return torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n)


def padding_mask(lengths, max_len):
    return (torch.arange(max_len) <= lengths[:, None])[:, None, None, :]  # BUG
