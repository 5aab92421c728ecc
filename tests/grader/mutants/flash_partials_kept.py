# quizprep: exercise=flash
# expect: check=memory diagnosis=flash-partials-kept
# Each key block's (max, sum, unnormalised output) is exact, but all are kept and combined at the end.
import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    scale = q.shape[-1] ** -0.5
    query_pos = torch.arange(n, device=q.device)[:, None] + (m - n)
    parts = []
    for start in range(0, m, block_size):
        stop = min(start + block_size, m)
        s = (q @ k[..., start:stop, :].transpose(-1, -2)) * scale
        if causal:
            s = s.masked_fill(torch.arange(start, stop, device=q.device) > query_pos, float("-inf"))
        top = s.amax(dim=-1, keepdim=True)
        top = torch.where(torch.isinf(top), torch.zeros_like(top), top)
        e = torch.exp(s - top)
        parts.append((top, e.sum(dim=-1, keepdim=True), e @ v[..., start:stop, :]))
    best = torch.stack([p[0] for p in parts]).amax(dim=0)
    total = sum(p[1] * torch.exp(p[0] - best) for p in parts)
    out = sum(p[2] * torch.exp(p[0] - best) for p in parts)
    return out / total
