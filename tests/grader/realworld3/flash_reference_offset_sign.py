# quizprep: exercise=flash
# style: flash-attention's blockwise reference function, with the bottom-right causal offset
# expect: fail diagnosis=causal-offset-sign
# bug: the offset between query and key positions is n - m instead of m - n
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    seqlen_q, seqlen_k = q.shape[-2], k.shape[-2]
    softmax_scale = 1.0 / math.sqrt(q.shape[-1])
    row_max = q.new_full(q.shape[:-1], float("-inf"), dtype=torch.float32)
    row_sum = q.new_zeros(q.shape[:-1], dtype=torch.float32)
    acc = q.new_zeros(*q.shape[:-1], v.shape[-1], dtype=torch.float32)
    row_idx = torch.arange(seqlen_q, device=q.device).unsqueeze(-1)
    for start in range(0, seqlen_k, block_size):
        stop = min(start + block_size, seqlen_k)
        s = (q.float() @ k[..., start:stop, :].float().transpose(-2, -1)) * softmax_scale
        if causal:
            col_idx = torch.arange(start, stop, device=q.device)
            s = s.masked_fill(col_idx > row_idx + seqlen_q - seqlen_k, float("-inf"))
        new_max = torch.maximum(row_max, s.amax(dim=-1))
        shift = torch.where(new_max == float("-inf"), torch.zeros_like(new_max), new_max)
        p = torch.exp(s - shift.unsqueeze(-1))
        correction = torch.exp(row_max - shift)
        row_sum = row_sum * correction + p.sum(dim=-1)
        acc = acc * correction.unsqueeze(-1) + p @ v[..., start:stop, :].float()
        row_max = new_max
    return (acc / row_sum.unsqueeze(-1)).to(q.dtype)
