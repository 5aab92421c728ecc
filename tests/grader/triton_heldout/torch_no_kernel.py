# quizprep: exercise=flash-triton
# source: written here: the online softmax in plain PyTorch, no kernel launched (what a learner who
# skips the Triton part hands in); it imports triton but never launches a kernel.
import math

import torch
import triton  # noqa: F401


def flash_attention(q, k, v, causal=False):
    n = q.shape[-2]
    s = (q.float() @ k.float().transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    m = s.amax(-1, keepdim=True)
    p = torch.exp(s - m)
    l = p.sum(-1, keepdim=True)
    return (p @ v.float() / l).to(q.dtype), (m + l.log()).squeeze(-1)
