# quizprep: exercise=flash
# expect: check=block-sizes diagnosis=flash-divide-in-loop
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    q = q / math.sqrt(q.shape[-1])
    m_i = torch.full(q.shape[:-1] + (1,), -float("inf"), dtype=q.dtype)
    l_i = torch.zeros_like(m_i)
    o = torch.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for j in range(0, m, block_size):
        s = q @ k[..., j:j + block_size, :].mT
        if causal:
            cols = torch.arange(j, min(j + block_size, m))
            s = torch.where(cols <= torch.arange(n)[:, None] + m - n, s, -float("inf"))
        m_new = torch.maximum(m_i, s.amax(-1, keepdim=True))
        p = (s - m_new).exp()
        alpha = (m_i - m_new).exp()
        l_new = l_i * alpha + p.sum(-1, keepdim=True)
        o = (o * alpha + p @ v[..., j:j + block_size, :]) / l_new  # normalised every block
        m_i, l_i = m_new, l_new
    return o
