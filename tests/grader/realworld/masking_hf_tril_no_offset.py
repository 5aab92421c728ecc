# quizprep: exercise=masking
# style: GPT-2-style lower-triangular buffer sliced to (n, m)
# expect: fail diagnosis=causal-no-offset
# bug: torch.tril without diagonal=m - n: with a KV cache the new queries cannot see the cached keys after position i
import torch


def causal_mask(n, m=None):
    m = n if m is None else m
    size = max(n, m)
    bias = torch.tril(torch.ones(size, size, dtype=torch.bool))
    return bias[:n, :m]


def padding_mask(lengths, max_len):
    mask = torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]
    return mask[:, None, None, :]
