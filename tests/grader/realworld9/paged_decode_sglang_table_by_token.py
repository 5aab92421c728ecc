# quizprep: exercise=paged-decode
# source: a one-line slip on sgl-project/sglang python/sglang/srt/layers/attention/torch_native_backend.py @ 770b24a2f188407c6681fddb57c18d5e0a96608f (TorchNativeAttnBackend._run_sdpa_forward_decode: per request, per_req_tokens = req_to_token[req_pool_idx, :seq_len_kv], k_cache[per_req_tokens].movedim(0, -2), SDPA with enable_gqa)
# style: token-level indirection (SGLang's req_to_token maps every token of a request to its slot in a flat token pool) rather than a page table; heads moved in front with movedim
# adapter: the block table turned into req_to_token (slot = block_table[b, t // page_size] * page_size + t % page_size) and the pool flattened to SGLang's (tokens, H_kv, d); req_pool_indices = arange(B); torch's scaled_dot_product_attention (off limits in the exercise) replaced by a float32 softmax with enable_gqa's repeat_interleave; scaling = d ** -0.5
# expect: fail diagnosis=paged-block-index
# bug: the adapter's page lookup slipped to block_table[:, t]: the table indexed by the token's position instead of t // page_size
from __future__ import annotations

import torch


def scaled_dot_product_attention(query, key, value, enable_gqa=False, scale=None, is_causal=False):
    """Stands in for torch's SDPA (off limits here): enable_gqa repeats KV heads with repeat_interleave."""
    if enable_gqa:
        key = key.repeat_interleave(query.shape[-3] // key.shape[-3], dim=-3)
        value = value.repeat_interleave(query.shape[-3] // value.shape[-3], dim=-3)
    scores = (query.float() @ key.float().transpose(-1, -2)) * scale
    return (torch.softmax(scores, dim=-1) @ value.float()).to(query.dtype)


def _run_sdpa_forward_decode(
    query: torch.Tensor,
    output: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    req_to_token: torch.Tensor,
    req_pool_indices: torch.Tensor,
    seq_lens: torch.Tensor,
    scaling=None,
    enable_gqa=False,
    causal=False,
):
    # [num_tokens, num_heads, head_size] -> [num_heads, num_tokens, head_size]
    query = query.movedim(0, query.dim() - 2)

    start_q, start_kv = 0, 0
    for seq_idx in range(seq_lens.shape[0]):
        seq_len_q = 1
        seq_len_kv = seq_lens[seq_idx]
        end_q = start_q + seq_len_q
        end_kv = start_kv + seq_len_kv

        per_req_query = query[:, start_q:end_q, :]
        req_pool_idx = req_pool_indices[seq_idx]
        per_req_tokens = req_to_token[req_pool_idx, :seq_len_kv]
        per_req_key = k_cache[per_req_tokens].movedim(0, query.dim() - 2)
        per_req_value = v_cache[per_req_tokens].movedim(0, query.dim() - 2)

        per_req_out = (
            scaled_dot_product_attention(
                per_req_query.unsqueeze(0),
                per_req_key.unsqueeze(0),
                per_req_value.unsqueeze(0),
                enable_gqa=enable_gqa,
                scale=scaling,
                is_causal=causal,
            )
            .squeeze(0)
            .movedim(query.dim() - 2, 0)
        )
        output[start_q:end_q, :, :] = per_req_out
        start_q, start_kv = end_q, end_kv

    return output


def req_to_token_from_pages(block_table, page_size, width):
    """Each token's slot in the flattened pool: page block_table[b, t // page_size], offset t % page_size."""
    t = torch.arange(width, device=block_table.device)
    return block_table.long()[:, t] * page_size + t % page_size


def paged_decode(q, k_pool, v_pool, block_table, seq_lens):
    num_pages, page_size, kv_heads, d = k_pool.shape
    req_to_token = req_to_token_from_pages(block_table, page_size, int(seq_lens.max()))
    output = torch.empty_like(q)
    return _run_sdpa_forward_decode(q, output, k_pool.reshape(-1, kv_heads, d), v_pool.reshape(-1, kv_heads, d),
                                    req_to_token, torch.arange(q.shape[0], device=q.device), seq_lens,
                                    scaling=d ** -0.5, enable_gqa=q.shape[1] != kv_heads)
