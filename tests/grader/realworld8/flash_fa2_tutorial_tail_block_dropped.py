# quizprep: exercise=flash
# source: the FlashAttention-2 forward loop (Dao 2023, Algorithm 1: running m and ℓ, O rescaled by diag(exp(m_old − m_new)), one division at the end) as written in PyTorch in course notes, with a common slip in the key loop: range(m // block_size)
# style: query rows kept whole, a key loop over a block count, state tensors updated out of place
# expect: fail diagnosis=flash-tail-block-dropped
# bug: num_blocks = m // block_size visits whole blocks only: when block_size does not divide m, the last m mod block_size keys are never attended
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    qf, kf, vf = q.float(), k.float(), v.float()
    row_max = torch.full(q.shape[:-1], float("-inf"), device=q.device)
    row_sum = torch.zeros(q.shape[:-1], device=q.device)
    acc = torch.zeros(*q.shape[:-1], v.shape[-1], device=q.device)
    query_pos = torch.arange(n, device=q.device) + (m - n)
    num_blocks = m // block_size
    for b in range(num_blocks):
        start, stop = b * block_size, (b + 1) * block_size
        s = qf @ kf[..., start:stop, :].transpose(-2, -1) * scale
        if causal:
            key_pos = torch.arange(start, stop, device=q.device)
            s = s.masked_fill(key_pos[None, :] > query_pos[:, None], float("-inf"))
        new_max = torch.maximum(row_max, s.amax(dim=-1))
        safe = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
        p = torch.exp(s - safe[..., None])
        correction = torch.exp(row_max - safe)
        row_sum = row_sum * correction + p.sum(dim=-1)
        acc = acc * correction[..., None] + p @ vf[..., start:stop, :]
        row_max = new_max
    return (acc / row_sum[..., None]).to(q.dtype)
