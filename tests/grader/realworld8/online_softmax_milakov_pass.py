# quizprep: exercise=online-softmax
# source: Milakov & Gimelshein 2018, "Online normalizer calculation for softmax" (arXiv:1805.02867), Algorithm 3: m_j ← max(m_{j−1}, x_j); d_j ← d_{j−1}·e^{m_{j−1} − m_j} + e^{x_j − m_j}; y_i ← e^{x_i − m_V} / d_V, applied a chunk at a time; §3.1's parallel form ⊕ for the merge
# style: the paper's names (m, d), the ⊕ operator as one function used by update and merge, masked_fill for the −inf guard
# adapter: the exercise's chunked loop and state names; exp(−inf − (−inf)) guarded by shifting with 0 while m is −inf
# expect: pass
import torch


def _oplus(m_a, d_a, m_b, d_b):
    m = torch.maximum(m_a, m_b)
    shift = m.masked_fill(torch.isneginf(m), 0.0)
    return m, d_a * torch.exp(m_a - shift) + d_b * torch.exp(m_b - shift)


def merge_states(max_a, sum_a, max_b, sum_b):
    return _oplus(max_a, sum_a, max_b, sum_b)


def online_update(row_max, row_sum, chunk):
    m_chunk = chunk.amax(dim=-1)
    shift = m_chunk.masked_fill(torch.isneginf(m_chunk), 0.0)
    d_chunk = torch.exp(chunk - shift[..., None]).sum(dim=-1)
    return _oplus(row_max, row_sum, m_chunk, d_chunk)


def online_softmax(x, chunk_size):
    m = torch.full(x.shape[:-1], float("-inf"), dtype=x.dtype, device=x.device)
    d = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    for start in range(0, x.shape[-1], chunk_size):
        m, d = online_update(m, d, x[..., start:start + chunk_size])
    return torch.exp(x - m[..., None]) / d[..., None]
