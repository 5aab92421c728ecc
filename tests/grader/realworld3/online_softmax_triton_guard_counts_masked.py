# quizprep: exercise=online-softmax
# style: Triton-tutorial state update with a -inf guard on the shifted logits
# expect: pass
# note: the guard replaces (x - m) by 0 while m is -inf, so every masked logit adds exp(0) = 1 to a
# state whose max is -inf; the next finite logit wipes it (exp(-inf) = 0), so the state means the
# empty state (issue 31: Inductor's online_softmax_reduce does the same). Once named
# online-empty-chunk-counted, a name this file's softmax never bore out.
import torch


def online_update(row_max, row_sum, chunk):
    m_new = torch.maximum(row_max, chunk.amax(dim=-1))
    still_empty = torch.isneginf(m_new)
    shifted = torch.where(still_empty.unsqueeze(-1), torch.zeros_like(chunk), chunk - m_new.unsqueeze(-1))
    alpha = torch.where(still_empty, torch.zeros_like(row_max), torch.exp(row_max - m_new))
    return m_new, row_sum * alpha + torch.exp(shifted).sum(dim=-1)


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
    return (torch.exp(work - m.unsqueeze(-1)) / s.unsqueeze(-1)).to(x.dtype)
