# quizprep: exercise=flash
# expect: check=memory diagnosis=flash-materialised-scores unread=block_size
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    # Right answer, wrong algorithm: the whole score matrix exists, then is walked in blocks.
    n, m = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(torch.ones(n, m, dtype=torch.bool).tril(m - n).logical_not(), float("-inf"))
    row_max = scores.amax(-1, keepdim=True)
    weights = (scores - row_max).exp()
    return (weights @ v) / weights.sum(-1, keepdim=True)
