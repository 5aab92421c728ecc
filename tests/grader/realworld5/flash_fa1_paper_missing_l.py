# quizprep: exercise=flash
# style: Algorithm 1 of the FlashAttention paper transcribed line by line: outer loop over K/V blocks, inner loop over Q blocks, O kept normalised and updated in place, m̃ and l̃ per block, B_r = B_c
# expect: fail diagnosis=flash-divide-in-loop
# bug: O_i ← diag(l_new)⁻¹ (e^{m_i − m_new} O_i + e^{m̃ − m_new} P̃ V_j) drops the diag(l_i) factor, so the old output is weighted as if its sum were 1
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    B_c = B_r = block_size
    N, d = q.shape[-2], q.shape[-1]
    M = k.shape[-2]
    offset = M - N
    dt = torch.float64 if q.dtype == torch.float64 else torch.float32
    Q, K, V = q.to(dt), k.to(dt), v.to(dt)
    tau = 1.0 / math.sqrt(d)

    O = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=dt, device=q.device)
    l = torch.zeros(*q.shape[:-1], 1, dtype=dt, device=q.device)
    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=dt, device=q.device)

    T_c = math.ceil(M / B_c)
    T_r = math.ceil(N / B_r)
    for j in range(T_c):
        c0, c1 = j * B_c, min((j + 1) * B_c, M)
        K_j, V_j = K[..., c0:c1, :], V[..., c0:c1, :]
        for i in range(T_r):
            r0, r1 = i * B_r, min((i + 1) * B_r, N)
            if causal and c0 > r1 - 1 + offset:
                continue  # the whole block is in the future of every query of this tile
            Q_i = Q[..., r0:r1, :]
            O_i, l_i, m_i = O[..., r0:r1, :], l[..., r0:r1, :], m[..., r0:r1, :]

            S_ij = tau * Q_i @ K_j.transpose(-1, -2)
            if causal:
                rows = torch.arange(r0, r1, device=q.device)[:, None] + offset
                cols = torch.arange(c0, c1, device=q.device)[None, :]
                S_ij = S_ij.masked_fill(cols > rows, torch.finfo(dt).min)
            m_tilde = S_ij.amax(dim=-1, keepdim=True)
            P_tilde = torch.exp(S_ij - m_tilde)
            l_tilde = P_tilde.sum(dim=-1, keepdim=True)

            m_new = torch.maximum(m_i, m_tilde)
            l_new = torch.exp(m_i - m_new) * l_i + torch.exp(m_tilde - m_new) * l_tilde

            O[..., r0:r1, :] = (torch.exp(m_i - m_new) * O_i + torch.exp(m_tilde - m_new) * (P_tilde @ V_j)) / l_new
            l[..., r0:r1, :] = l_new
            m[..., r0:r1, :] = m_new
    return O.to(q.dtype)
