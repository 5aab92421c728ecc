# quizprep: exercise=attention-backward
# expect: pass
# FlashAttention-2's backward as Algorithm 2 of Dao 2023 (FlashAttention-2, §3.1.2) writes it: D = rowsum(dO ∘ O)
# first; an outer loop over key blocks j (K_j, V_j, dK_j, dV_j in SRAM), an inner loop over query blocks i with
# S_ij = Q_i K_jᵀ, P_ij = exp(S_ij − L_i), dV_j += P_ijᵀ dO_i, dP_ij = dO_i V_jᵀ, dS_ij = P_ij ∘ (dP_ij − D_i),
# dQ_i += dS_ij K_j (an atomic add in the kernel), dK_j += dS_ij Q_i. Adapter: the scale folded into S and the
# gradients, whole matrices when block_size is None, causal blocks skipped or masked, GQA summed per group.
from __future__ import annotations

import math

import torch


def attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None):
    B, H, N, d = q.shape
    G, M = k.shape[1], k.shape[2]
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    Q, O, dO, L = q.float(), o.float(), d_o.float(), lse.float()  # noqa: E741 - the paper's names
    K = k.float().repeat_interleave(H // G, dim=1)
    V = v.float().repeat_interleave(H // G, dim=1)
    Bc = Br = block_size or max(N, M)
    D = (dO * O).sum(-1)  # (B, H, N)
    dQ, dK, dV = torch.zeros_like(Q), torch.zeros_like(K), torch.zeros_like(V)
    for j in range(0, M, Bc):
        Kj, Vj = K[:, :, j:j + Bc], V[:, :, j:j + Bc]
        dKj, dVj = torch.zeros_like(Kj), torch.zeros_like(Vj)
        for i in range(0, N, Br):
            rows = torch.arange(i, min(i + Br, N), device=q.device) + (M - N)
            cols = torch.arange(j, min(j + Bc, M), device=q.device)
            if causal and int(cols[0]) > int(rows[-1]):
                continue  # the whole block lies in the future of every query in it
            Qi, dOi = Q[:, :, i:i + Br], dO[:, :, i:i + Br]
            Sij = scale * Qi @ Kj.transpose(-1, -2)
            Pij = torch.exp(Sij - L[:, :, i:i + Br, None])
            if causal:
                Pij = torch.where(cols[None, :] <= rows[:, None], Pij, torch.zeros_like(Pij))
            dVj += Pij.transpose(-1, -2) @ dOi
            dPij = dOi @ Vj.transpose(-1, -2)
            dSij = Pij * (dPij - D[:, :, i:i + Br, None])
            dQ[:, :, i:i + Br] += scale * dSij @ Kj
            dKj += scale * dSij.transpose(-1, -2) @ Qi
        dK[:, :, j:j + Bc], dV[:, :, j:j + Bc] = dKj, dVj
    dK = dK.unflatten(1, (G, H // G)).sum(2)
    dV = dV.unflatten(1, (G, H // G)).sum(2)
    return dQ.to(q.dtype), dK.to(k.dtype), dV.to(v.dtype)
