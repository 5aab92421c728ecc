# quizprep: exercise=masking
# source: the sequence_mask of d2l-ai/d2l-en (mask = torch.arange(maxlen)[None, :] < valid_len[:, None]) with a one-line slip, `<=` for `<`
# style: arange against lengths, causal mask from tril on ones with the offset as the diagonal
# expect: fail diagnosis=padding-off-by-one
# bug: `<=` keeps position lengths[b] too: every sequence shorter than max_len attends one padding key
import torch


def causal_mask(n, m=None):
    m = n if m is None else m
    return torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n)


def padding_mask(lengths, max_len):
    mask = torch.arange(max_len, device=lengths.device)[None, :] <= lengths[:, None]
    return mask[:, None, None, :]
