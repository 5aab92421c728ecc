# quizprep: exercise=flash
# source: a one-line slip on shreyansh26/FlashAttention-PyTorch flash_attention.py (flash_attention_forward, Algorithm 1 of FlashAttention v1: Q, K, V split with torch.split into blocks, key blocks outer, query blocks inner; m_block_ij = max(S_ij), P_ij = exp(S_ij - m_block_ij), l_block_ij = sum(P_ij) + EPSILON, mi_new = maximum(m_block_ij, mi), li_new = exp(mi - mi_new) * li + exp(m_block_ij - mi_new) * l_block_ij, O_i = (li / li_new) * exp(mi - mi_new) * O_i + (exp(m_block_ij - mi_new) / li_new) * P_ij V_j)
# style: lists of blocks from torch.split, einsum with ellipsis, the state written back into the block lists, EPSILON = 1e-10 in ℓ
# adapter: block_size for both block sizes; causal through the element-wise mask on each block (the repo takes a key mask), queries at i + m - n; P_ij zeroed where masked and the block max guarded while a row has seen only masked keys; the state in float32 (float64 for float64 inputs), the result cast to q's dtype
# expect: fail diagnosis=flash-no-rescale
# bug: li_new = li + exp(m_block_ij − mi_new) · l_block_ij: the old sum is not brought to the new maximum, so whenever a later block raises a row's maximum the old terms are overweighted
import torch

EPSILON = 1e-10
NEG_INF = -1e10


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    Q, K, V = (t.to(work) for t in (q, k, v))
    scale = 1 / q.shape[-1] ** 0.5
    O = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=work, device=q.device)
    l = torch.zeros(*q.shape[:-1], 1, dtype=work, device=q.device)
    mx = torch.full((*q.shape[:-1], 1), NEG_INF, dtype=work, device=q.device)
    Q_BLOCKS = list(torch.split(Q, block_size, dim=-2))
    K_BLOCKS, V_BLOCKS = torch.split(K, block_size, dim=-2), torch.split(V, block_size, dim=-2)
    O_BLOCKS = list(torch.split(O, block_size, dim=-2))
    l_BLOCKS = list(torch.split(l, block_size, dim=-2))
    m_BLOCKS = list(torch.split(mx, block_size, dim=-2))
    for j, (Kj, Vj) in enumerate(zip(K_BLOCKS, V_BLOCKS)):
        key_pos = torch.arange(j * block_size, j * block_size + Kj.shape[-2], device=q.device)
        for i, Qi in enumerate(Q_BLOCKS):
            Oi, li, mi = O_BLOCKS[i], l_BLOCKS[i], m_BLOCKS[i]
            S_ij = scale * torch.einsum("... i d, ... j d -> ... i j", Qi, Kj)
            keep = torch.ones(S_ij.shape[-2:], dtype=torch.bool, device=q.device)
            if causal:
                query_pos = torch.arange(i * block_size, i * block_size + Qi.shape[-2], device=q.device) + m - n
                keep = key_pos[None, :] <= query_pos[:, None]
            S_ij = S_ij.masked_fill(~keep, NEG_INF)
            m_block_ij, _ = torch.max(S_ij, dim=-1, keepdim=True)
            P_ij = torch.exp(S_ij - m_block_ij) * keep
            l_block_ij = torch.sum(P_ij, dim=-1, keepdim=True) + EPSILON
            P_ij_Vj = torch.einsum("... i j, ... j d -> ... i d", P_ij, Vj)
            mi_new = torch.maximum(m_block_ij, mi)
            li_new = li + torch.exp(m_block_ij - mi_new) * l_block_ij
            O_BLOCKS[i] = (li / li_new) * torch.exp(mi - mi_new) * Oi + (torch.exp(m_block_ij - mi_new) / li_new) * P_ij_Vj
            l_BLOCKS[i], m_BLOCKS[i] = li_new, mi_new
    return torch.cat(O_BLOCKS, dim=-2).to(q.dtype)
