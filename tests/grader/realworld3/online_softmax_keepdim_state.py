# quizprep: exercise=online-softmax
# style: flash-attention reference style, the row statistics kept as (..., 1) columns
# expect: fail diagnosis=kept-dim
# bug: online_update returns the state with a trailing dimension of size 1
import torch


def online_update(row_max, row_sum, chunk):
    m_prev, l_prev = row_max.unsqueeze(-1), row_sum.unsqueeze(-1)
    m_cur = torch.maximum(m_prev, chunk.amax(dim=-1, keepdim=True))
    base = torch.where(torch.isneginf(m_cur), torch.zeros_like(m_cur), m_cur)
    l_cur = l_prev * torch.exp(m_prev - base) + torch.exp(chunk - base).sum(dim=-1, keepdim=True)
    return m_cur, l_cur


def merge_states(max_a, sum_a, max_b, sum_b):
    m = torch.maximum(max_a, max_b)
    safe = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    return m, sum_a * torch.exp(max_a - safe) + sum_b * torch.exp(max_b - safe)


def online_softmax(x, chunk_size):
    work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    m = torch.full(work.shape[:-1], float("-inf"), dtype=work.dtype, device=x.device)
    s = torch.zeros_like(m)
    for start in range(0, work.shape[-1], chunk_size):
        m, s = online_update(m, s, work[..., start:start + chunk_size])
        m, s = m.squeeze(-1), s.squeeze(-1)
    return (torch.exp(work - m.unsqueeze(-1)) / s.unsqueeze(-1)).to(x.dtype)
