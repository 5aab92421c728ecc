# quizprep: exercise=paged-decode
# source: a one-line slip on jax-ml/jax jax/experimental/pallas/ops/tpu/ragged_paged_attention.py @ 4b49c0352355c4d71c701aba74e52c678d6627fd (ref_ragged_paged_attention, the reference of the TPU ragged paged attention kernel: per sequence, q = queries[cu_q_lens[i]:cu_q_lens[i + 1]], k = k_pages[page_indices[i]].reshape(-1, num_kv_heads, head_dim)[:kv_len], jnp.repeat over the heads axis, einsum("qhd,khd->hqk", preferred_element_type=float32) * sm_scale, a causal mask from two iotas with q_span = (kv_len - q_len) + row, attn += where(q_span < kv_span, mask_value, 0), jax.nn.softmax then .astype(v.dtype), einsum("hqk,khd->qhd"))
# style: JAX reference for mixed prefill and decode: ragged queries addressed by cumulative lengths, pages gathered and sliced to kv_len, K/V repeated per query head, the causal rule written as a comparison of two iota position grids added as a large negative bias
# adapter: jnp.* rewritten as torch.* op for op (jnp.repeat(axis=1) → repeat_interleave(dim=1), broadcasted_iota → arange broadcast to attn's shape, jax.nn.softmax → torch.softmax, preferred_element_type=float32 → float32 operands); one query per sequence: cu_q_lens = arange(B + 1), kv_lens = seq_lens, page_indices = block_table, num_seqs = [B]; sm_scale = d^-0.5; the contract's pool is already the kernel's [total_num_pages, page_size, num_kv_heads, head_dim]
# expect: fail diagnosis=paged-length-off-by-one
# bug: slip of ours: the causal bias is added where q_span <= kv_span instead of q_span < kv_span, which also hides the key at the query's own position: in a decode step that is the newest token, so each sequence attends to its first seq_len - 1 tokens only
from __future__ import annotations

import torch

DEFAULT_MASK_VALUE = -0.7 * float(torch.finfo(torch.float32).max)


def ref_ragged_paged_attention(
    queries: torch.Tensor,  # [max_num_batched_tokens, num_q_heads, head_dim]
    k_pages: torch.Tensor,  # [total_num_pages, page_size, num_kv_heads, head_dim]
    v_pages: torch.Tensor,  # [total_num_pages, page_size, num_kv_heads, head_dim]
    kv_lens: torch.Tensor,  # i32[max_num_seqs]
    page_indices: torch.Tensor,  # i32[max_num_seqs, pages_per_seq]
    cu_q_lens: torch.Tensor,  # i32[max_num_seqs + 1]
    num_seqs: torch.Tensor,  # i32[1],
    *,
    sm_scale: float = 1.0,
    mask_value: float = DEFAULT_MASK_VALUE,
):
    _, _, num_kv_heads, head_dim = k_pages.shape
    num_q_heads = queries.shape[1]
    assert num_q_heads % num_kv_heads == 0
    num_query_per_kv = num_q_heads // num_kv_heads
    outputs = []
    for i in range(int(num_seqs[0])):
        q_start = int(cu_q_lens[i])
        q_end = int(cu_q_lens[i + 1])
        q_len = q_end - q_start
        kv_len = int(kv_lens[i])
        indices = page_indices[i]
        q = queries[q_start:q_end]
        k = k_pages[indices, :, :, :].reshape(-1, num_kv_heads, head_dim)[:kv_len]
        v = v_pages[indices, :, :, :].reshape(-1, num_kv_heads, head_dim)[:kv_len]
        k = torch.repeat_interleave(k, num_query_per_kv, dim=1)
        v = torch.repeat_interleave(v, num_query_per_kv, dim=1)
        attn = torch.einsum("qhd,khd->hqk", q.to(torch.float32), k.to(torch.float32))
        attn *= sm_scale
        q_span = (kv_len - q_len) + torch.arange(attn.shape[1], device=attn.device)[None, :, None].expand(attn.shape)
        kv_span = torch.arange(attn.shape[2], device=attn.device)[None, None, :].expand(attn.shape)
        attn += torch.where(q_span <= kv_span, mask_value, 0.0)
        attn = torch.softmax(attn, dim=-1).to(v.dtype)
        out = torch.einsum("hqk,khd->qhd", attn, v).to(queries.dtype)
        outputs.append(out)

    return torch.cat(outputs, dim=0)


def paged_decode(q, k_pool, v_pool, block_table, seq_lens):
    B = q.shape[0]
    cu_q_lens = torch.arange(B + 1)
    return ref_ragged_paged_attention(
        q, k_pool, v_pool, seq_lens, block_table.to(torch.long), cu_q_lens, torch.tensor([B]),
        sm_scale=q.shape[-1] ** -0.5,
    )
