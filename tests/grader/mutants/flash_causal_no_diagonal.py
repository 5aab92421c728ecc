# quizprep: exercise=flash
# expect: check=causal diagnosis=causal-no-diagonal
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(q.shape[-1])
    m_i = torch.full(q.shape[:-1] + (1,), -math.inf, dtype=q.dtype)
    l_i = torch.zeros_like(m_i)
    o = torch.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    rows = torch.arange(n)[:, None] + (m - n)
    for j in range(0, m, block_size):
        s = torch.einsum("...id,...jd->...ij", q, k[..., j:j + block_size, :]) * scale
        if causal:
            s = s.masked_fill(torch.arange(j, min(j + block_size, m))[None, :] >= rows, -math.inf)  # BUG
        m_new = torch.maximum(m_i, s.amax(-1, keepdim=True))
        base = m_new.nan_to_num(neginf=0.0)
        p = (s - base).exp()
        alpha = (m_i - base).exp()
        l_i = l_i * alpha + p.sum(-1, keepdim=True)
        o = o * alpha + p @ v[..., j:j + block_size, :]
        m_i = m_new
    return o / l_i
