# quizprep: exercise=flash
# expect: check=stability diagnosis=no-max-shift
# Split-KV style: each key block gives its normalised output and log-sum-exp, folded left to right.
# The two log-sum-exps are combined as log(exp(a) + exp(b)), without taking out their maximum:
# exp of an lse in the hundreds is inf in float32.
import math

import torch


def _block(q, k, v, scale, hidden):
    s = (q @ k.transpose(-2, -1)) * scale
    if hidden is not None:
        s = s.masked_fill(hidden, float("-inf"))
    top = s.amax(dim=-1, keepdim=True)
    top = torch.where(torch.isinf(top), torch.zeros_like(top), top)
    p = torch.exp(s - top)
    denom = p.sum(dim=-1, keepdim=True)
    return (p @ v) / denom.clamp_min(1e-30), top + torch.log(denom)


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    work = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    dtype = q.dtype
    q, k, v = q.to(work), k.to(work), v.to(work)
    scale = 1.0 / math.sqrt(q.shape[-1])
    rows = torch.arange(n, device=q.device).unsqueeze(-1) + (m - n)
    out, lse = None, None
    for lo in range(0, m, block_size):
        hi = min(lo + block_size, m)
        hidden = (torch.arange(lo, hi, device=q.device) > rows) if causal else None
        o_b, lse_b = _block(q, k[..., lo:hi, :], v[..., lo:hi, :], scale, hidden)
        if out is None:
            out, lse = o_b, lse_b
            continue
        both = torch.log(torch.exp(lse) + torch.exp(lse_b))  # BUG
        out = torch.exp(lse - both) * out + torch.exp(lse_b - both) * o_b
        lse = both
    return out.to(dtype)
