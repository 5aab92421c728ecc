# quizprep: exercise=flash
# style: one loop over key blocks for all queries at once, FA2 state (m, l, acc) as float32 buffers for half inputs, keyword-heavy names
# expect: fail diagnosis=flash-no-rescale
# bug: when a block raises the row maximum the running sum is rescaled by exp(m_old - m_new) but the output accumulator is not
import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    acc_dtype = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    scale = q.shape[-1] ** -0.5
    q_scaled = q.to(acc_dtype) * scale

    row_max = torch.full(q.shape[:-1], float("-inf"), dtype=acc_dtype, device=q.device)
    row_sum = torch.zeros(q.shape[:-1], dtype=acc_dtype, device=q.device)
    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=acc_dtype, device=q.device)

    query_pos = torch.arange(n, device=q.device).unsqueeze(1) + (m - n)
    for start in range(0, m, block_size):
        end = min(start + block_size, m)
        k_blk = k[..., start:end, :].to(acc_dtype)
        v_blk = v[..., start:end, :].to(acc_dtype)
        scores = q_scaled @ k_blk.transpose(-2, -1)
        if causal:
            key_pos = torch.arange(start, end, device=q.device).unsqueeze(0)
            scores = scores.masked_fill(key_pos > query_pos, float("-inf"))
        new_max = torch.maximum(row_max, scores.amax(dim=-1))
        safe_max = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
        alpha = torch.exp(row_max - safe_max)
        p = torch.exp(scores - safe_max.unsqueeze(-1))
        row_sum = row_sum * alpha + p.sum(dim=-1)
        acc = acc + p @ v_blk
        row_max = new_max
    return (acc / row_sum.unsqueeze(-1)).to(q.dtype)
