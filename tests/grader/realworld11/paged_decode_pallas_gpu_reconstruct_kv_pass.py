# quizprep: exercise=paged-decode
# source: jax-ml/jax tests/pallas/gpu_paged_attention_test.py and jax/experimental/pallas/ops/gpu/paged_attention.py @ b74c06222f08174d527c7880a2476684d85a81ab (the test's _reconstruct_kv: pages[block_tables] per sequence and per KV head through two jax.vmap, reshaped to (-1, head_dim) and swapped to (batch, seq, kv_heads, head_dim); paged_attention_reference: q reshaped to (batch, kv_heads, q_heads_per_kv_head, head_dim), einsum("bkgd,bksd->bkgs", preferred_element_type=float32), mask = arange(kv_seq_len) < lengths[:, None] with DEFAULT_MASK_VALUE = -0.7 * finfo(float32).max, jax.nn.softmax, einsum("bkgs,bksd->bkgd") against float32 values, cast to q's dtype)
# style: JAX reference code: every page of the block table gathered whole (padding entries included) with vmapped fancy indexing, the stale tail removed by a length mask rather than by slicing, GQA as a grouped einsum over (kv_head, group) without repeating K/V
# adapter: jnp.* rewritten as torch.* op for op (jax.vmap → torch.func.vmap, jnp.swapaxes → swapaxes, jax.nn.softmax → torch.softmax, preferred_element_type=float32 → float32 operands); the contract's pool (num_pages, page_size, G, d) permuted to Pallas's (G, num_pages, page_size, d); the kernel and its reference take q already scaled, so the caller's q · d^-0.5 is passed (in float32)
# expect: pass
from __future__ import annotations

import torch

DEFAULT_MASK_VALUE = -0.7 * float(torch.finfo(torch.float32).max)


def _reconstruct_kv(block_tables: torch.Tensor, pages: torch.Tensor) -> torch.Tensor:
    def fn(_block_tables, _pages):
        head_dim = _pages.shape[-1]
        out = _pages[_block_tables]  # [max_num_blocks_per_seq, page_size, head_dim]

        return out.reshape(-1, head_dim)

    with_batch = torch.func.vmap(fn, (0, None), 0)
    attn_fn = torch.func.vmap(with_batch, (None, 0), 1)

    out = attn_fn(block_tables, pages)
    out = torch.swapaxes(out, 1, 2)

    return out


def paged_attention_reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    lengths: torch.Tensor,
    *,
    mask_value: float = DEFAULT_MASK_VALUE,
) -> torch.Tensor:
    """Grouped query attention reference implementation.

    Args:
      q: A [batch_size, num_heads, head_dim] array.
      k: A [batch_size, kv_seq_len, num_kv_heads, head_dim] array.
      v: A [batch_size, kv_seq_len, num_kv_heads, head_dim] array.
      lengths: A i32[batch_size] array the length of each example.
    """
    batch_size, num_heads, head_dim = q.shape
    _, kv_seq_len, num_kv_heads, _ = k.shape

    q_heads_per_kv_head = num_heads // num_kv_heads
    q_reshaped = q.reshape(
        batch_size, num_kv_heads, q_heads_per_kv_head, head_dim
    )
    k_transposed = torch.swapaxes(
        k, 1, 2
    )  # [batch_size, num_kv_heads, kv_seq_len, head_dim]
    v_transposed = torch.swapaxes(
        v, 1, 2
    )  # [batch_size, num_kv_heads, kv_seq_len, head_dim]

    logits = torch.einsum(
        "bkgd,bksd->bkgs", q_reshaped.to(torch.float32), k_transposed.to(torch.float32)
    ).to(torch.float32)

    if lengths is not None:
        mask = torch.arange(kv_seq_len, device=q.device)[None, :] < lengths[:, None]
        mask = torch.broadcast_to(mask[:, None, None, :], logits.shape)
        logits = torch.where(mask, logits, mask_value)

    weights = torch.softmax(logits, dim=-1)
    o = torch.einsum(
        "bkgs,bksd->bkgd", weights, v_transposed.to(torch.float32)
    ).to(q.dtype)
    o = o.reshape(q.shape)

    return o


def paged_decode(q, k_pool, v_pool, block_table, seq_lens):
    k_pages = k_pool.permute(2, 0, 1, 3)  # (G, num_pages, page_size, d)
    v_pages = v_pool.permute(2, 0, 1, 3)
    block_tables = block_table.to(torch.long)
    k = _reconstruct_kv(block_tables, k_pages)
    v = _reconstruct_kv(block_tables, v_pages)
    o = paged_attention_reference(q.to(torch.float32) * q.shape[-1] ** -0.5, k, v, lengths=seq_lens.to(q.device))
    return o.to(q.dtype)
