# quizprep: exercise=flash
# style: the Triton fused-attention tutorial's loop transcribed to PyTorch, with the -inf start
# expect: pass
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    sm_scale = 1.0 / math.sqrt(q.shape[-1])
    m_i = torch.full(q.shape[:-1], float("-inf"), dtype=torch.float32, device=q.device)
    l_i = torch.zeros(q.shape[:-1], dtype=torch.float32, device=q.device)
    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=torch.float32, device=q.device)
    qf = q.float() * sm_scale
    offs_m = torch.arange(n, device=q.device) + (m - n)
    for start_n in range(0, m, block_size):
        kb = k[..., start_n:start_n + block_size, :].float()
        vb = v[..., start_n:start_n + block_size, :].float()
        qk = qf @ kb.transpose(-1, -2)
        if causal:
            offs_n = torch.arange(start_n, start_n + kb.shape[-2], device=q.device)
            qk = qk.masked_fill(offs_n[None, :] > offs_m[:, None], float("-inf"))
        m_ij = torch.maximum(m_i, qk.amax(-1))
        safe = torch.where(torch.isinf(m_ij), torch.zeros_like(m_ij), m_ij)
        p = torch.exp(qk - safe[..., None])
        alpha = torch.exp(m_i - safe)
        l_i = l_i * alpha + p.sum(-1)
        acc = acc * alpha[..., None] + p @ vb
        m_i = m_ij
    return (acc / l_i[..., None]).to(q.dtype)
