# quizprep: exercise=masking
# Correct: position comparisons instead of tril; padding via unsqueeze.
import torch


def causal_mask(n, m=None):
    m = n if m is None else m
    query_pos = torch.arange(m - n, m).unsqueeze(1)
    return torch.arange(m).unsqueeze(0) <= query_pos


def padding_mask(lengths, max_len):
    keep = torch.arange(max_len, device=lengths.device).expand(len(lengths), max_len) < lengths.unsqueeze(1)
    return keep.unsqueeze(1).unsqueeze(2)
