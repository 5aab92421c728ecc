# quizprep: exercise=flash
# style: Flash-Decoding-minded: every key block becomes its own partial state (max, sum, unnormalised output) and is folded in with a symmetric merge of two states, -inf maxima guarded with torch.where, causal future blocks skipped with a break, float32 work for half inputs
# expect: pass
import torch


def _safe(m):
    return torch.where(torch.isinf(m), torch.zeros_like(m), m)


def _merge(a, b):
    m_a, l_a, o_a = a
    m_b, l_b, o_b = b
    m = torch.maximum(m_a, m_b)
    c_a = torch.exp(m_a - _safe(m))
    c_b = torch.exp(m_b - _safe(m))
    return m, l_a * c_a + l_b * c_b, o_a * c_a + o_b * c_b


def flash_attention(q, k, v, *, causal=False, block_size=64):
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    n, m, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    offset = m - n
    qw = q.to(work) * (q.shape[-1] ** -0.5)
    lead = q.shape[:-2]
    state = (
        torch.full((*lead, n, 1), float("-inf"), dtype=work, device=q.device),
        torch.zeros((*lead, n, 1), dtype=work, device=q.device),
        torch.zeros((*lead, n, d_v), dtype=work, device=q.device),
    )
    query_pos = torch.arange(n, device=q.device)[:, None] + offset
    for start in range(0, m, block_size):
        if causal and start > n - 1 + offset:
            break
        stop = min(start + block_size, m)
        s = qw @ k[..., start:stop, :].to(work).transpose(-1, -2)
        if causal:
            key_pos = torch.arange(start, stop, device=q.device)[None, :]
            s = s.masked_fill(key_pos > query_pos, float("-inf"))
        m_b = s.amax(dim=-1, keepdim=True)
        p = torch.exp(s - _safe(m_b))
        block = (m_b, p.sum(dim=-1, keepdim=True), p @ v[..., start:stop, :].to(work))
        state = _merge(state, block)
    _, l, o = state
    out = torch.where(l > 0, o / torch.where(l > 0, l, torch.ones_like(l)), torch.zeros_like(o))
    return out.to(q.dtype)
