# quizprep: exercise=flash
# source: the tiled causal loop of Tri Dao's flash-attention reference `attention_ref`-style code and many course notebooks (e.g. the "Flash Attention from scratch" PyTorch blog loops): `if causal and k_start > q_end: break`, mask `k_idx > q_idx`, written for self-attention where n == m
# style: queries and keys both tiled, the diagonal tiles masked element-wise with absolute indices, later key tiles skipped with break, float32 accumulators
# expect: fail diagnosis=causal-no-offset
# bug: the causal diagonal is top-left (query i sees keys 0..i) instead of bottom-right (keys 0..i + m - n): with a KV cache (m > n) the queries are the last n positions and see far too few keys
import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    scale = q.shape[-1] ** -0.5
    out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
    for q_start in range(0, n, block_size):
        q_end = min(q_start + block_size, n)
        qb = q[..., q_start:q_end, :].float() * scale
        m_i = torch.full((*qb.shape[:-1], 1), float("-inf"), device=q.device)
        l_i = torch.zeros_like(m_i)
        acc = torch.zeros(*qb.shape[:-1], v.shape[-1], device=q.device)
        q_idx = torch.arange(q_start, q_end, device=q.device)[:, None]
        for k_start in range(0, m, block_size):
            if causal and k_start > q_end - 1:
                break
            k_end = min(k_start + block_size, m)
            s = qb @ k[..., k_start:k_end, :].float().transpose(-1, -2)
            if causal:
                k_idx = torch.arange(k_start, k_end, device=q.device)[None, :]
                s = s.masked_fill(k_idx > q_idx, float("-inf"))
            m_new = torch.maximum(m_i, s.amax(dim=-1, keepdim=True))
            p = torch.exp(s - m_new)
            alpha = torch.exp(m_i - m_new)
            l_i = l_i * alpha + p.sum(dim=-1, keepdim=True)
            acc = acc * alpha + p @ v[..., k_start:k_end, :].float()
            m_i = m_new
        out[..., q_start:q_end, :] = (acc / l_i).to(q.dtype)
    return out
