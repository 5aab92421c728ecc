# quizprep: exercise=online-softmax
# expect: check=stability diagnosis=no-max-shift
# The normaliser is a plain running sum of exp(x): right until exp overflows.
import torch


def online_update(row_max, row_sum, chunk):
    return torch.maximum(row_max, chunk.amax(-1)), row_sum + chunk.exp().sum(-1)  # BUG


def merge_states(max_a, sum_a, max_b, sum_b):
    return torch.maximum(max_a, max_b), sum_a + sum_b


def online_softmax(x, chunk_size):
    total = torch.zeros(x.shape[:-1], dtype=x.dtype)
    for start in range(0, x.shape[-1], chunk_size):
        total = total + x[..., start:start + chunk_size].exp().sum(-1)  # BUG
    return x.exp() / total.unsqueeze(-1)  # BUG
