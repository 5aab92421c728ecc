# quizprep: exercise=online-softmax
# source: the split-KV merge reference of sgl-project/sglang's sgl-kernel tests (merge_state torch reference, the same code as the torch reference in the merge_attn_states kernel tests: max_lse = torch.maximum(p_lse, s_lse); p_lse_exp = torch.exp(p_lse - max_lse); s_lse_exp = torch.exp(s_lse - max_lse); out_se = p_lse_exp + s_lse_exp; output_lse = torch.log(out_se) + max_lse), +inf turned into -inf first
# style: states carried as log-sum-exps, the merge as log(Σ exp(lse − max)) + max, a chunk's state from torch.logsumexp
# adapter: a (max, sum) state is lse = max + log(sum); the merged lse goes back as (m, exp(lse − m)) with m the larger of the two maxima, so row_max stays the maximum the contract asks for; the chunk's state from amax and torch.logsumexp
# expect: fail diagnosis=online-nan-masked-chunk
# bug: nothing guards the case where both log-sum-exps are −inf (the empty state merged with an all −inf chunk, e.g. a masked first chunk): −inf − (−inf) is NaN and the row's state stays NaN
import torch


def _lse(row_max, row_sum):
    return row_max + torch.log(row_sum)


def merge_lse(p_lse, s_lse):
    p_lse = torch.where(p_lse == torch.inf, -torch.inf, p_lse)
    s_lse = torch.where(s_lse == torch.inf, -torch.inf, s_lse)
    max_lse = torch.maximum(p_lse, s_lse)
    p_lse_exp = torch.exp(p_lse - max_lse)
    s_lse_exp = torch.exp(s_lse - max_lse)
    out_se = p_lse_exp + s_lse_exp
    return torch.log(out_se) + max_lse


def _state(row_max, output_lse):
    return row_max, torch.exp(output_lse - row_max)


def merge_states(max_a, sum_a, max_b, sum_b):
    return _state(torch.maximum(max_a, max_b), merge_lse(_lse(max_a, sum_a), _lse(max_b, sum_b)))


def online_update(row_max, row_sum, chunk):
    output_lse = merge_lse(_lse(row_max, row_sum), torch.logsumexp(chunk, dim=-1))
    return _state(torch.maximum(row_max, chunk.amax(dim=-1)), output_lse)


def online_softmax(x, chunk_size):
    row_max = torch.full(x.shape[:-1], float("-inf"), dtype=x.dtype, device=x.device)
    row_sum = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    for chunk in torch.split(x, chunk_size, dim=-1):
        row_max, row_sum = online_update(row_max, row_sum, chunk)
    return torch.exp(x - row_max[..., None]) / row_sum[..., None]
