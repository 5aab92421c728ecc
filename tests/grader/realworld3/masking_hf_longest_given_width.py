# quizprep: exercise=masking
# style: Hugging Face style helper that sizes the mask from the lengths it is given
# expect: fail diagnosis=padding-width-from-lengths
# bug: the width comes from lengths.max(), not the requested max_len
import torch


def causal_mask(n, m=None):
    m = n if m is None else m
    return torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n)


def padding_mask(lengths, max_len):
    width = int(lengths.max())
    positions = torch.arange(width, device=lengths.device)
    expanded = positions[None, :] < lengths[:, None]
    return expanded[:, None, None, :]
