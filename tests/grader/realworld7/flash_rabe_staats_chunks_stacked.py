# quizprep: exercise=flash
# source: AminRezaei0x443/memory-efficient-attention attention_torch.py (Rabe & Staats, "Self-attention Does Not Need O(n²) Memory"): _query_chunk_attention's summarize_chunk per key chunk, the chunk results stacked, then combined with the global max
# style: key chunks summarised independently (exp_values, exp_weights.sum, max_score), torch.stack of all chunks, global max over the chunk axis, rescale and sum
# expect: fail diagnosis=flash-partials-kept
# bug: every key chunk's partial output (n × d_v) is kept alive until the end (torch.stack), so the extra memory is (m / block) · n · d_v: it grows as the block shrinks, and at small blocks exceeds the n × m score matrix the exercise forbids. The JAX original relies on jax.checkpoint and lax.map; a loop that folds each chunk in keeps O(n · d_v)
import torch


def _summarize_chunk(q, k, v):
    s = q @ k.transpose(-1, -2)
    max_score = s.amax(dim=-1, keepdim=True)
    exp_weights = torch.exp(s - max_score)
    return exp_weights @ v, exp_weights.sum(dim=-1), max_score.squeeze(-1)


def flash_attention(q, k, v, *, causal=False, block_size=64):
    m = k.shape[-2]
    n = q.shape[-2]
    q = q * (q.shape[-1] ** -0.5)
    values, weights, maxes = [], [], []
    for start in range(0, m, block_size):
        k_c, v_c = k[..., start:start + block_size, :], v[..., start:start + block_size, :]
        if causal:
            s_c = q @ k_c.transpose(-1, -2)
            key_pos = torch.arange(start, start + k_c.shape[-2], device=q.device)
            query_pos = torch.arange(n, device=q.device)[:, None] + (m - n)
            s_c = s_c.masked_fill(key_pos > query_pos, float("-inf"))
            mx = s_c.amax(dim=-1, keepdim=True)
            mx_safe = torch.where(torch.isinf(mx), torch.zeros_like(mx), mx)
            e = torch.exp(s_c - mx_safe)
            values.append(e @ v_c)
            weights.append(e.sum(dim=-1))
            maxes.append(mx.squeeze(-1))
        else:
            a, b, c = _summarize_chunk(q, k_c, v_c)
            values.append(a)
            weights.append(b)
            maxes.append(c)
    chunk_values, chunk_weights, chunk_max = torch.stack(values), torch.stack(weights), torch.stack(maxes)
    global_max = chunk_max.amax(dim=0, keepdim=True)
    max_diffs = torch.exp(torch.where(torch.isinf(chunk_max), torch.full_like(chunk_max, float("-inf")),
                                      chunk_max - global_max))
    all_values = (chunk_values * max_diffs[..., None]).sum(dim=0)
    all_weights = (chunk_weights * max_diffs).sum(dim=0)
    return all_values / all_weights[..., None]
