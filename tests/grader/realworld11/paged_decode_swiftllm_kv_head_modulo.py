# quizprep: exercise=paged-decode
# source: a one-line slip on interestingLSY/swiftLLM swiftllm/worker/kernels/paged_attn.py and swiftllm/worker/model.py @ 8a7b1678db8b5f7798e37d4698e86f25bd589376 (paged_attention: phase 1, one program per (sequence, query head, sequence block of seq_block_size tokens), kv head = q head // (num_q_heads / num_kv_heads), pages read through block_table[seq_id, block_idx], scores = sum(q * k_block) * softmax_scale * log2(e), the last sequence block masked by offs_token < seq_len with -1e20, a running max starting at -1e20 with exp2 rescaling, mid_o = acc / sum_exp and mid_o_logexpsum = log2(sum_exp) + max_score stored in float32; phase 2 merges a sequence's blocks by their base-2 log-sum-exp; model.py picks seq_block_size by halving 2048 while the launch stays small)
# style: a small vLLM clone's Triton Flash-Decoding kernel: two launches, the first writing normalised partial outputs with a base-2 log-sum-exp per sequence block, the second folding them with the same running-max recurrence; a finite -1e20 instead of -inf everywhere
# adapter: tl.* rewritten as torch.* op for op (tl.math.exp2 → torch.exp2, tl.sum/tl.max → sum/amax); each Triton program a Python call with its program ids as arguments; the contract's pool permuted to swiftLLM's (num_blocks, num_layers = 1, num_kv_heads, block_size, head_dim); seq_ids = arange(B) so block_table rows are the contract's; q and the pages upcast to float32 as they are loaded; seq_block_size rounded up to a multiple of the page size (model.py asserts it is one); phase 2's .to(tl.float16) store made in q's dtype (the model's dtype); "float32" is at least float32 (float64 inputs stay float64)
# expect: fail diagnosis=gqa-repeat
# bug: slip of ours: phase 1 picks its KV head as my_q_head_id % num_kv_heads instead of my_q_head_id // num_my_heads, so query head h reads KV head h mod G (the head order Tensor.repeat gives) rather than h // (H / G); MHA and MQA are unaffected
from __future__ import annotations

import math

import torch


def _fwd_paged_attention_phase1(
    mid_o, mid_o_logexpsum, q, k_cache, v_cache, block_table, softmax_scale, decoding_seq_lens, seq_ids,
    num_seq_blocks, cur_layer, num_layers, num_q_heads, num_kv_heads, num_my_heads, block_size, head_dim,
    seq_block_size, max_blocks_per_seq,
    my_batch_id, my_q_head_id, my_seq_block_id,
):
    # grid shape: [num_decoding_seqs, num_q_heads, num_seq_blocks]
    work = mid_o.dtype
    my_kv_head_id = my_q_head_id % num_kv_heads

    my_seq_id = int(seq_ids[my_batch_id])
    my_seq_len = int(decoding_seq_lens[my_batch_id])
    my_start_token_idx = my_seq_block_id * seq_block_size

    if my_start_token_idx >= my_seq_len:
        return

    my_q = q[my_batch_id, my_q_head_id].to(work)  # [head_dim]

    start_block_idx = my_seq_block_id * (seq_block_size // block_size)

    max_score = torch.tensor(float("-1e20"), dtype=work, device=mid_o.device)
    sum_exp = torch.tensor(0.0, dtype=work, device=mid_o.device)
    acc = torch.zeros([head_dim], dtype=work, device=mid_o.device)

    # In the following code we deal with the case where the sequence block is
    # the last one in the sequence separately, because:
    #   - The last sequence block may not be a full block, therefore maskings
    #     are needed.
    #   - We can use tl.arange() when the sequence block is not the last one,
    #     leading to better performance.
    if my_start_token_idx + seq_block_size > my_seq_len:
        # The seq block I am processing is the last one in the sequence
        my_num_blocks = -(-(my_seq_len - my_start_token_idx) // block_size)
        for block_i in range(0, my_num_blocks):
            block_idx = start_block_idx + block_i
            block_index = int(block_table[my_seq_id, block_idx])
            k_block = k_cache[block_index, cur_layer, my_kv_head_id].to(work)  # [block_size, head_dim]
            attn_score = torch.sum(my_q[None, :] * k_block, dim=1)  # [block_size]
            attn_score = attn_score * softmax_scale
            offs_token = block_i * block_size + my_start_token_idx + torch.arange(0, block_size, device=mid_o.device)
            attn_score = torch.where(offs_token < my_seq_len, attn_score, float("-1e20"))
            v_block = v_cache[block_index, cur_layer, my_kv_head_id].to(work)  # [block_size, head_dim]

            cur_max_score = torch.amax(attn_score, dim=0)
            new_max_score = torch.maximum(max_score, cur_max_score)
            exp_attn_score = torch.exp2(attn_score - new_max_score)
            old_acc_scale = torch.exp2(max_score - new_max_score)

            acc = acc * old_acc_scale + torch.sum(exp_attn_score[:, None] * v_block, dim=0)
            sum_exp = sum_exp * old_acc_scale + torch.sum(exp_attn_score, dim=0)
            max_score = new_max_score
    else:
        # The seq block I am processing is NOT the last one in the sequence
        for block_i in range(0, seq_block_size // block_size):
            block_idx = start_block_idx + block_i
            block_index = int(block_table[my_seq_id, block_idx])
            k_block = k_cache[block_index, cur_layer, my_kv_head_id].to(work)  # [block_size, head_dim]
            attn_score = torch.sum(my_q[None, :] * k_block, dim=1)  # [block_size]
            attn_score = attn_score * softmax_scale
            v_block = v_cache[block_index, cur_layer, my_kv_head_id].to(work)  # [block_size, head_dim]

            cur_max_score = torch.amax(attn_score, dim=0)
            new_max_score = torch.maximum(max_score, cur_max_score)
            exp_attn_score = torch.exp2(attn_score - new_max_score)
            old_acc_scale = torch.exp2(max_score - new_max_score)

            acc = acc * old_acc_scale + torch.sum(exp_attn_score[:, None] * v_block, dim=0)
            sum_exp = sum_exp * old_acc_scale + torch.sum(exp_attn_score, dim=0)
            max_score = new_max_score

    mid_o[my_batch_id, my_q_head_id, my_seq_block_id] = acc / sum_exp
    # Here tl.log(sum_exp) + max_score = log(sum(e^{a_i}))
    mid_o_logexpsum[my_batch_id, my_q_head_id, my_seq_block_id] = torch.log2(sum_exp) + max_score


def _fwd_paged_attention_phase2(
    mid_o, mid_o_logexpsum, o, decoding_seq_lens, num_q_heads, head_dim, num_seq_blocks, seq_block_size,
    my_batch_id, my_q_head_id,
):
    # grid shape: [num_decoding_seqs, num_q_heads]
    work = mid_o.dtype
    my_seq_len = int(decoding_seq_lens[my_batch_id])
    my_num_seq_blocks = -(-my_seq_len // seq_block_size)

    sum_exp = torch.tensor(0.0, dtype=work, device=mid_o.device)
    max_score = torch.tensor(float("-1e20"), dtype=work, device=mid_o.device)
    acc = torch.zeros([head_dim], dtype=work, device=mid_o.device)

    for seq_block_id in range(my_num_seq_blocks):
        cur_mid_o = mid_o[my_batch_id, my_q_head_id, seq_block_id]  # [head_dim]
        cur_mid_o_logexpsum = mid_o_logexpsum[my_batch_id, my_q_head_id, seq_block_id]

        new_max_score = torch.maximum(max_score, cur_mid_o_logexpsum)
        old_scale = torch.exp2(max_score - new_max_score)
        exp_score = torch.exp2(cur_mid_o_logexpsum - new_max_score)
        acc = acc * old_scale + exp_score * cur_mid_o
        sum_exp = sum_exp * old_scale + exp_score
        max_score = new_max_score

    o[my_batch_id, my_q_head_id] = (acc / sum_exp).to(o.dtype)


def paged_attention(q, k_cache, v_cache, block_table, decoding_seq_lens, seq_ids, softmax_scale,
                    num_layers, num_q_heads, num_kv_heads, block_size, head_dim, seq_block_size,
                    max_blocks_per_seq, cur_layer, o):
    num_decoding_seqs = q.shape[0]
    num_seq_blocks = -(-int(decoding_seq_lens.max()) // seq_block_size)
    work = torch.promote_types(q.dtype, torch.float32)
    mid_o = torch.empty((num_decoding_seqs, num_q_heads, num_seq_blocks, head_dim), dtype=work, device=q.device)
    mid_o_logexpsum = torch.empty((num_decoding_seqs, num_q_heads, num_seq_blocks), dtype=work, device=q.device)

    for b in range(num_decoding_seqs):
        for h in range(num_q_heads):
            for sb in range(num_seq_blocks):
                _fwd_paged_attention_phase1(
                    mid_o, mid_o_logexpsum, q, k_cache, v_cache, block_table,
                    # Here we multiply softmax_scale by log2(e) and use `exp2` instead of
                    # `exp` because of two reasons:
                    # 1. Up to 12 Jun 2024, all NVIDIA GPUs does not have a `exp` instruction
                    #    in PTX. When calculating `exp`, they multiply the input by log2(e)
                    #    and use `exp2` instead.
                    # 2. Some optimizations are disabled while using `exp` in a loop, see
                    #    https://github.com/triton-lang/triton/issues/2961
                    softmax_scale * 1.442695040888963,
                    decoding_seq_lens, seq_ids, num_seq_blocks, cur_layer,
                    num_layers, num_q_heads, num_kv_heads, num_q_heads // num_kv_heads,
                    block_size, head_dim, seq_block_size, max_blocks_per_seq,
                    b, h, sb,
                )

    for b in range(num_decoding_seqs):
        for h in range(num_q_heads):
            _fwd_paged_attention_phase2(
                mid_o, mid_o_logexpsum, o, decoding_seq_lens, num_q_heads, head_dim, num_seq_blocks,
                seq_block_size, b, h,
            )
    return o


def _select_seq_block_size(num_kv_heads, decoding_seq_lens_list, block_size):
    # model.py: Select the seq_block_size
    max_decoding_len = max(decoding_seq_lens_list)
    seq_block_size = 2048
    decoding_seq_lens_sum = sum(decoding_seq_lens_list)
    while num_kv_heads * (decoding_seq_lens_sum / seq_block_size) < 1024 and seq_block_size // 2 >= 64 and \
            max_decoding_len / (seq_block_size // 2) <= 128:
        seq_block_size //= 2
    return -(-seq_block_size // block_size) * block_size


def paged_decode(q, k_pool, v_pool, block_table, seq_lens):
    B, H, d = q.shape
    num_pages, page_size, G, _ = k_pool.shape
    k_cache = k_pool.permute(0, 2, 1, 3).unsqueeze(1)  # [num_blocks, num_layers, num_kv_heads, block_size, head_dim]
    v_cache = v_pool.permute(0, 2, 1, 3).unsqueeze(1)
    seq_block_size = _select_seq_block_size(G, seq_lens.tolist(), page_size)
    o = torch.empty((B, H, d), dtype=q.dtype, device=q.device)
    return paged_attention(
        q, k_cache, v_cache, block_table, seq_lens, torch.arange(B), d ** -0.5,
        1, H, G, page_size, d, seq_block_size, block_table.shape[1], 0, o,
    )
