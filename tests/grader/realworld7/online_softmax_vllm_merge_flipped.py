# quizprep: exercise=online-softmax
# source: vLLM's merge_attn_states torch reference (vllm/attention/ops/merge_attn_states.py, the split-KV combine of two partial results by their log-sum-exps), rewritten on (max, sum) states
# style: chunk states built with a -inf guard, the merge picks the larger maximum with torch.where and rescales both sums to it
# expect: fail diagnosis=merge-min
# bug: the comparison in the merge is flipped (torch.where(max_a < max_b, max_a, max_b)): the merged maximum is the smaller one, so the larger state's sum is multiplied by exp(positive) and overflows for large gaps; the state is equivalent only while the maxima are equal
import torch


def _safe(m):
    return torch.where(torch.isinf(m), torch.zeros_like(m), m)


def merge_states(max_a, sum_a, max_b, sum_b):
    new_max = torch.where(max_a < max_b, max_a, max_b)
    both_empty = torch.isinf(max_a) & torch.isinf(max_b)
    scale_a = torch.where(torch.isinf(max_a), torch.zeros_like(max_a), torch.exp(max_a - _safe(new_max)))
    scale_b = torch.where(torch.isinf(max_b), torch.zeros_like(max_b), torch.exp(max_b - _safe(new_max)))
    new_sum = torch.where(both_empty, torch.zeros_like(sum_a), sum_a * scale_a + sum_b * scale_b)
    return new_max, new_sum


def online_update(row_max, row_sum, chunk):
    c_max = chunk.amax(dim=-1)
    c_sum = torch.exp(chunk - _safe(c_max)[..., None]).sum(dim=-1)
    return merge_states(row_max, row_sum, c_max, c_sum)


def online_softmax(x, chunk_size):
    row_max = torch.full(x.shape[:-1], float("-inf"), dtype=x.dtype, device=x.device)
    row_sum = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    for chunk in torch.split(x, chunk_size, dim=-1):
        row_max, row_sum = online_update(row_max, row_sum, chunk)
    return torch.exp(x - row_max[..., None]) / row_sum[..., None]
