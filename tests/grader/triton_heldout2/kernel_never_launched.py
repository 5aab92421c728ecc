# quizprep: exercise=flash-triton
# A kernel-less answer of another kind than triton_heldout/torch_no_kernel.py: a @triton.jit kernel is
# written but flash_attention never launches it and returns PyTorch's result instead (a half-finished port).
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _scores_kernel(Q, K, S, N, D: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    feats = tl.arange(0, D)
    q = tl.load(Q + row * D + feats)
    k = tl.load(K + cols[:, None] * D + feats[None, :], mask=cols[:, None] < N, other=0.0)
    tl.store(S + row * N + cols, tl.sum(q[None, :] * k, 1), mask=cols < N)


def flash_attention(q, k, v, causal=False):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[-2]
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    lse = torch.logsumexp(scores.float(), dim=-1)
    return torch.exp(scores.float() - lse[..., None]).to(v.dtype) @ v, lse
