# quizprep: exercise=online-softmax
# style: a small rescale helper shared by update and merge, -inf guard with masked_fill, states kept in the input dtype
# expect: fail diagnosis=online-rescale-inverted
# bug: the correction factor is exp(m_new - m_old) (≥ 1) instead of exp(m_old - m_new), in the shared helper used by both update and merge
import torch


def _rescale(total, old_max, new_max):
    """Bring a sum taken relative to old_max to new_max."""
    factor = torch.exp(new_max - old_max)
    return (total * factor).masked_fill(torch.isneginf(old_max), 0.0)


def online_update(row_max, row_sum, chunk):
    new_max = torch.maximum(row_max, chunk.amax(-1))
    base = new_max.masked_fill(torch.isneginf(new_max), 0.0)
    fresh = torch.exp(chunk - base[..., None]).sum(-1)
    return new_max, _rescale(row_sum, row_max, new_max) + fresh


def merge_states(max_a, sum_a, max_b, sum_b):
    new_max = torch.maximum(max_a, max_b)
    return new_max, _rescale(sum_a, max_a, new_max) + _rescale(sum_b, max_b, new_max)


def online_softmax(x, chunk_size):
    row_max = x.new_full(x.shape[:-1], float("-inf"))
    row_sum = x.new_zeros(x.shape[:-1])
    for chunk in x.split(chunk_size, dim=-1):
        row_max, row_sum = online_update(row_max, row_sum, chunk)
    return torch.exp(x - row_max[..., None]) / row_sum[..., None]
