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
    top = torch.max(max_a, max_b)
    finite_top = top.nan_to_num(neginf=0.0)
    scale_a, scale_b = (max_a - finite_top).exp(), (max_b - finite_top).exp()
    return top, scale_a * sum_a + scale_b * sum_b


def online_softmax(x, chunk_size):
    x32 = x.to(torch.float32) if x.element_size() < 4 else x
    state = (x32.new_full(x32.shape[:-1], -float("inf")), x32.new_zeros(x32.shape[:-1]))
    for chunk in x32.split(chunk_size, dim=-1):
        big, total = online_update(*state, chunk)
        state = (big[..., 0], total[..., 0])
    big, total = state
    return ((x32 - big[..., None]).exp() / total[..., None]).type(x.dtype)
