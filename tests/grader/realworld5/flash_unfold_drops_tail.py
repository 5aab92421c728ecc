# quizprep: exercise=flash
# style: key blocks cut with Tensor.unfold (a strided view, no copies), the block loop vectorised over batch and heads, state updated with torch.where
# expect: fail diagnosis=flash-tail-block-dropped
# bug: k.unfold(-2, block_size, block_size) silently drops the last, shorter block when m is not a multiple of block_size
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.size(-2), k.size(-2)
    compute = torch.float32 if q.element_size() < 4 else q.dtype
    q_ = q.to(compute) / math.sqrt(q.size(-1))
    k_blocks = k.to(compute).unfold(-2, block_size, block_size)  # (..., n_blocks, d, block)
    v_blocks = v.to(compute).unfold(-2, block_size, block_size)  # (..., n_blocks, d_v, block)

    mx = q_.new_full(q.shape[:-1] + (1,), -math.inf)
    den = q_.new_zeros(q.shape[:-1] + (1,))
    num = q_.new_zeros(q.shape[:-1] + (v.size(-1),))
    qpos = torch.arange(n, device=q.device)[:, None] + (m - n)

    for b in range(k_blocks.size(-3)):
        s = q_ @ k_blocks[..., b, :, :]
        if causal:
            kpos = torch.arange(b * block_size, (b + 1) * block_size, device=q.device)[None, :]
            s = s.masked_fill(kpos > qpos, -math.inf)
        mx_new = torch.maximum(mx, s.amax(-1, keepdim=True))
        shift = torch.where(mx_new == -math.inf, torch.zeros_like(mx_new), mx_new)
        corr = torch.exp(mx - shift)
        p = torch.exp(s - shift)
        den = den * corr + p.sum(-1, keepdim=True)
        num = num * corr + p @ v_blocks[..., b, :, :].transpose(-1, -2)
        mx = mx_new
    return (num / den).to(q.dtype)
