# quizprep: exercise=masking
# style: index arithmetic with broadcast aranges (key j visible when j <= i + m - n; j < length)
# expect: pass
import torch


def causal_mask(n, m=None):
    if m is None:
        m = n
    i = torch.arange(n)[:, None]
    j = torch.arange(m)[None, :]
    return j <= i + (m - n)


def padding_mask(lengths, max_len):
    positions = torch.arange(max_len, device=lengths.device)
    return (positions[None, :] < lengths[:, None])[:, None, None, :]
