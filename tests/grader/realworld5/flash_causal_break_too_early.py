# quizprep: exercise=flash
# style: query tiles and key tiles both of block_size, a helper per tile, an early break out of the key loop once the key tile lies in the future
# expect: fail diagnosis=flash-causal-skip-off-by-one
# bug: the break test uses >= against the tile's last query position, so a key tile that starts exactly at that position (the diagonal) is skipped
import math

import torch


def _attend_tile(q_tile, k, v, first_pos, causal, block_size):
    rows = q_tile.shape[-2]
    m = k.shape[-2]
    last_pos = first_pos + rows - 1
    m_i = torch.full(q_tile.shape[:-1], -float("inf"), dtype=q_tile.dtype, device=q_tile.device)
    l_i = torch.zeros_like(m_i)
    o_i = torch.zeros(*q_tile.shape[:-1], v.shape[-1], dtype=q_tile.dtype, device=q_tile.device)
    for k_start in range(0, m, block_size):
        if causal and k_start >= last_pos:
            break
        k_end = min(k_start + block_size, m)
        s = q_tile @ k[..., k_start:k_end, :].transpose(-1, -2)
        if causal:
            qp = torch.arange(first_pos, last_pos + 1, device=s.device).view(-1, 1)
            kp = torch.arange(k_start, k_end, device=s.device).view(1, -1)
            s = s.masked_fill(kp > qp, -float("inf"))
        m_new = torch.maximum(m_i, s.amax(-1))
        m_safe = m_new.nan_to_num(neginf=0.0)
        scale_old = torch.exp(m_i - m_safe)
        p = torch.exp(s - m_safe[..., None])
        l_i = l_i * scale_old + p.sum(-1)
        o_i = o_i * scale_old[..., None] + p @ v[..., k_start:k_end, :]
        m_i = m_new
    return o_i / l_i[..., None]


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, d = q.shape[-2:]
    m = k.shape[-2]
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    qw = q.to(work) * (1.0 / math.sqrt(d))
    kw, vw = k.to(work), v.to(work)
    tiles = [_attend_tile(qw[..., s:s + block_size, :], kw, vw, s + m - n, causal, block_size)
             for s in range(0, n, block_size)]
    return torch.cat(tiles, dim=-2).to(q.dtype)
