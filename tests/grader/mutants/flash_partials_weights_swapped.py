# quizprep: exercise=flash
# expect: check=shapes diagnosis=flash-merge-weights-swapped
# The running output is kept normalised, with its log-sum-exp; each key block's normalised output is
# merged in with the two shares crossed: the old output scaled by the block's share.

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    scale = q.shape[-1] ** -0.5
    pos = torch.arange(n, device=q.device)[:, None] + (m - n)
    acc, lse = None, None
    for j in range(0, m, block_size):
        kb, vb = k[..., j:j + block_size, :], v[..., j:j + block_size, :]
        s = torch.einsum("...qd,...kd->...qk", q, kb) * scale
        if causal:
            s = torch.where(torch.arange(j, j + kb.shape[-2], device=q.device)[None, :] <= pos, s, float("-inf"))
        blk_lse = torch.logsumexp(s, dim=-1, keepdim=True)
        safe = torch.nan_to_num(blk_lse, neginf=0.0)
        blk_out = torch.exp(s - safe) @ vb / torch.exp(blk_lse - safe).clamp_min(1e-30)
        if acc is None:
            acc, lse = blk_out, blk_lse
            continue
        new_lse = torch.logaddexp(lse, blk_lse)
        w_old, w_new = torch.exp(lse - new_lse), torch.exp(blk_lse - new_lse)
        acc = w_new * acc + w_old * blk_out  # BUG: shares crossed
        lse = new_lse
    return acc
