# quizprep: exercise=flash
# source: the FlashAttention-2 forward loop (Dao 2023, Algorithm 1) as written in PyTorch in course notes, with the FlashAttention-1 habit of normalising inside the loop, O_i ← O_i / ℓ_i after every block, kept while the rescale of O drops ℓ_old
# style: query rows kept whole, torch.split over the keys, the output normalised every block
# expect: fail diagnosis=flash-divide-in-loop
# bug: acc is divided by the running sum inside the loop, but the next block rescales it by exp(m_old − m_new) only, not by ℓ_old / ℓ_new: after two or more blocks the earlier blocks' terms are weighted wrongly
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    qf = q.float()
    row_max = torch.full(q.shape[:-1], float("-inf"), device=q.device)
    row_sum = torch.zeros(q.shape[:-1], device=q.device)
    acc = torch.zeros(*q.shape[:-1], v.shape[-1], device=q.device)
    query_pos = torch.arange(n, device=q.device) + (m - n)
    start = 0
    for k_blk, v_blk in zip(torch.split(k, block_size, dim=-2), torch.split(v, block_size, dim=-2)):
        s = qf @ k_blk.float().transpose(-2, -1) * scale
        if causal:
            key_pos = torch.arange(start, start + k_blk.shape[-2], device=q.device)
            s = s.masked_fill(key_pos[None, :] > query_pos[:, None], float("-inf"))
        start += k_blk.shape[-2]
        new_max = torch.maximum(row_max, s.amax(dim=-1))
        safe = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
        p = torch.exp(s - safe[..., None])
        correction = torch.exp(row_max - safe)
        row_sum = row_sum * correction + p.sum(dim=-1)
        acc = acc * correction[..., None] + p @ v_blk.float()
        acc = acc / torch.where(row_sum == 0, torch.ones_like(row_sum), row_sum)[..., None]
        row_max = new_max
    return acc.to(q.dtype)
