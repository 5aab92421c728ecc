# quizprep: exercise=masking
# Correct on the CPU, but builds the positions without device=: fails for lengths on a GPU.
# expect: check=device diagnosis=device-tensor-without-device
import torch


def causal_mask(n, m=None):
    m = n if m is None else m
    return torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n)


def padding_mask(lengths, max_len):
    return (torch.arange(max_len) < lengths[:, None])[:, None, None, :]
