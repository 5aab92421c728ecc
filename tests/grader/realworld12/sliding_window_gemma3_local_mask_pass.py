# quizprep: exercise=sliding-window
# source: google/gemma_pytorch gemma/model.py @ 014acb7ac4563a5f77c76d7ff98f31b568c16508 (Gemma 3: GemmaForCausalLM.generate builds mask_tensor = triu(full((1, 1, max_seq_len, max_seq_len), -2.3819763e38), diagonal=1) and local_mask_tensor = mask_tensor + tril(full(..., -2.3819763e38), diagonal=-sliding_window_size), and selects the rows of the current input positions with index_select(2, input_positions_tensor); GemmaAttention.forward uses local_mask for LOCAL_SLIDING layers: q.mul_(scaling), scores = q @ k^T + mask, F.softmax(scores.float(), dim=-1).type_as(q), @ v)
# style: Google's inference Gemma: one precomputed max_seq_len square of additive -2.3819763e38, the window made by ADDING a second -2.3819763e38 lower band (tril(diagonal=-window); the two overflow to -inf in float32 where they meet), rows picked by position with index_select, q scaled in place, the softmax in float32 then type_as(q)
# adapter: max_seq_len = m and the input positions m - n .. m - 1 (the last n of m, as the contract's queries; generate() picks the same rows for a prompt and then one row per decoded position); sliding_window_mask is the additive mask == 0; sliding_window_attention runs GemmaAttention.forward from the transposed (B, H, S, d) q, k, v on (no projections, RoPE, soft-capping or cache: the contract hands q, k, v in) with scaling = head_dim**-0.5 (query_pre_attn_scalar unset) and mul_ applied to a copy of q; the mask moved to the inputs' device (added after the first grading: the port had left it on the CPU, where Keras and gemma_pytorch put it on the model's device)
# expect: pass
from __future__ import annotations

import torch
import torch.nn.functional as F


def _masks(n, sliding_window_size, m):
    # GemmaForCausalLM.generate
    max_seq_len = m
    input_positions_tensor = torch.arange(m - n, m, dtype=torch.int64)
    mask_tensor = torch.full((1, 1, max_seq_len, max_seq_len),
                             -2.3819763e38).to(torch.float)
    mask_tensor = torch.triu(mask_tensor, diagonal=1)
    local_mask_tensor = mask_tensor + torch.tril(
        torch.full((1, 1, max_seq_len, max_seq_len), -2.3819763e38),
        diagonal=-sliding_window_size,
    )
    curr_local_mask_tensor = local_mask_tensor.index_select(2, input_positions_tensor)
    return curr_local_mask_tensor


def sliding_window_mask(n, window, m=None):
    m = n if m is None else m
    return (_masks(n, window, m) == 0)[0, 0]


def sliding_window_attention(q, k, v, window):
    batch_size, num_heads, n, head_dim = q.shape
    m = k.shape[2]
    scaling = head_dim**-0.5
    mask = _masks(n, window, m).to(q.device)

    # GemmaAttention.forward, from the transposed q, k, v on
    q = q.clone()  # Gemma's q is its own projection; the caller's q is not scaled in place
    # [batch_size, n_local_heads, input_len, max_seq_len]
    q.mul_(scaling)
    scores = torch.matmul(q, k.transpose(2, 3))
    scores = scores + mask
    scores = F.softmax(scores.float(), dim=-1).type_as(q)

    # [batch_size, n_local_heads, input_len, head_dim]
    output = torch.matmul(scores, v)
    return output
