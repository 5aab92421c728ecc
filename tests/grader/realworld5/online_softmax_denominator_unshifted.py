# quizprep: exercise=online-softmax
# style: blog-post derivation written out: update and merge via one rescale line each, keepdim avoided, a for loop with
# explicit slicing, the true denominator "recovered" from the state at the end
# expect: fail diagnosis=no-max-shift
# bug: online_softmax returns exp(x) / (row_sum · exp(row_max)), which equals the softmax on paper but undoes the
# max shift: exp(1e4) overflows and exp(-1e4) underflows to 0/0
import torch


def online_update(row_max, row_sum, chunk):
    new_max = torch.maximum(row_max, chunk.max(dim=-1).values)
    base = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
    new_sum = row_sum * torch.exp(row_max - base) + torch.exp(chunk - base.unsqueeze(-1)).sum(dim=-1)
    return new_max, new_sum


def merge_states(max_a, sum_a, max_b, sum_b):
    new_max = torch.maximum(max_a, max_b)
    base = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
    return new_max, sum_a * torch.exp(max_a - base) + sum_b * torch.exp(max_b - base)


def online_softmax(x, chunk_size):
    row_max = torch.full(x.shape[:-1], float("-inf"), dtype=x.dtype, device=x.device)
    row_sum = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    for start in range(0, x.shape[-1], chunk_size):
        row_max, row_sum = online_update(row_max, row_sum, x[..., start:start + chunk_size])
    # row_sum = Σ exp(x - m), so Σ exp(x) = row_sum · exp(m)
    return torch.exp(x) / (row_sum * torch.exp(row_max)).unsqueeze(-1)
