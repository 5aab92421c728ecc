# quizprep: exercise=masking
# style: in-place tril_ with the cache offset as the diagonal, padding via expand + comparison
# expect: pass
import torch


def causal_mask(n, m=None):
    if m is None:
        m = n
    mask = torch.ones(n, m, dtype=torch.bool)
    mask.tril_(diagonal=m - n)
    return mask


def padding_mask(lengths, max_len):
    B = lengths.shape[0]
    cols = torch.arange(max_len, device=lengths.device).expand(B, max_len)
    keep = cols < lengths.unsqueeze(1)
    return keep.view(B, 1, 1, max_len)
