# quizprep: exercise=masking
# style: fairseq-like helpers: key padding built as "is pad", then flipped to the keep convention
# expect: pass
import torch


def causal_mask(n, m=None):
    m = n if m is None else m
    future = torch.triu(torch.ones(n, m, dtype=torch.bool), diagonal=m - n + 1)
    return ~future


def padding_mask(lengths, max_len):
    range_row = torch.arange(max_len, device=lengths.device).expand(lengths.numel(), max_len)
    key_padding = range_row >= lengths.unsqueeze(1)
    return (~key_padding).view(lengths.numel(), 1, 1, max_len)
