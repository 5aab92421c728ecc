# quizprep: exercise=flash
# source: a one-line slip on the FlashAttention-2 forward loop (Dao 2023, Algorithm 1) as written in PyTorch tutorials: P̃ = exp(S - m_new) with m_new the running max
# style: key blocks, m_i / l_i / acc kept as (…, n, 1) and (…, n, d_v), rescale by exp(m_i - m_new), one division at the end
# expect: fail diagnosis=flash-exp-block-max
# bug: the block's terms are exponentiated against the block's own maximum (exp(S - rowmax(S))) instead of the new running maximum, while ℓ and the accumulator are rescaled to the running maximum: a block whose maximum is below the running one is weighted too heavily. Right when the maximum only grows block by block
import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    qs = q.float() * q.shape[-1] ** -0.5
    m_i = torch.full((*q.shape[:-1], 1), float("-inf"), device=q.device)
    l_i = torch.zeros_like(m_i)
    acc = torch.zeros(*q.shape[:-1], v.shape[-1], device=q.device)
    q_pos = torch.arange(n, device=q.device)[:, None] + (m - n)
    for start in range(0, m, block_size):
        stop = min(start + block_size, m)
        s = qs @ k[..., start:stop, :].float().transpose(-1, -2)
        if causal:
            s = s.masked_fill(torch.arange(start, stop, device=q.device) > q_pos, float("-inf"))
        m_blk = s.amax(dim=-1, keepdim=True)
        m_new = torch.maximum(m_i, m_blk)
        m_new_safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        m_blk_safe = torch.where(torch.isinf(m_blk), torch.zeros_like(m_blk), m_blk)
        p = torch.exp(s - m_blk_safe)
        alpha = torch.exp(m_i - m_new_safe)
        l_i = l_i * alpha + p.sum(dim=-1, keepdim=True)
        acc = acc * alpha + p @ v[..., start:stop, :].float()
        m_i = m_new
    return (acc / l_i).to(q.dtype)
