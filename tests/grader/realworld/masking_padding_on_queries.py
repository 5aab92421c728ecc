# quizprep: exercise=masking
# style: index arithmetic with broadcast aranges
# expect: fail diagnosis=padding-on-queries
# bug: the padding mask is laid out as (B, 1, max_len, 1), hiding query rows instead of key columns
import torch


def causal_mask(n, m=None):
    if m is None:
        m = n
    return torch.arange(m)[None, :] <= torch.arange(n)[:, None] + (m - n)


def padding_mask(lengths, max_len):
    valid = torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]
    return valid[:, None, :, None]
