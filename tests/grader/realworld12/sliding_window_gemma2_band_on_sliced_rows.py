# quizprep: exercise=sliding-window
# source: google/gemma_pytorch gemma/model.py @ 80881c2e6e797ef1913a4a705d4b40394791cc58 (Gemma 2: GemmaForCausalLM.generate passes curr_mask_tensor = mask_tensor.index_select(2, input_positions_tensor), the causal rows of the current positions; GemmaAttention.forward for LOCAL_SLIDING layers: all_ones = torch.ones_like(mask); sliding_mask = torch.triu(all_ones, -1 * sliding_window_size + 1) * torch.tril(all_ones, sliding_window_size - 1); mask = torch.where(sliding_mask == 1, mask, -2.3819763e38); then scores + mask and the float32 softmax)
# style: Google's inference Gemma 2: the window cut inside the attention layer from whatever (input_len, max_seq_len) mask it is handed: a 0/1 band triu(ones, -W + 1) * tril(ones, W - 1) built on that mask's own row and column indices, then torch.where(band == 1, mask, -2.3819763e38); q scaled in place, the softmax in float32
# adapter: max_seq_len = m and the input positions m - n .. m - 1 (the last n of m, as the contract's queries; generate() picks the same rows for a prompt and then one row per decoded position); sliding_window_mask is the additive mask == 0; sliding_window_attention runs GemmaAttention.forward from the transposed (B, H, S, d) q, k, v on (no projections, RoPE, soft-capping or cache: the contract hands q, k, v in) with scaling = head_dim**-0.5 (query_pre_attn_scalar unset) and mul_ applied to a copy of q; the mask moved to the inputs' device (added after the first grading: the port had left it on the CPU, where Keras and gemma_pytorch put it on the model's device)
# bug: as published: the band is built on the row indices of the already index_select'ed (input_len, max_seq_len) mask, so the window is measured from row i, not from position m - n + i; with a KV cache (m > n) query i keeps keys i - W < j <= i + W - 1 (capped by the causal part), and a decoded token (n = 1, row 0) sees only the first W positions of the cache; correct only when n == m. Replaced in cb7c0152a369e43908e769eb09e1ce6043afe084 ("Add Gemma3"), where generate() builds local_mask_tensor on the full max_seq_len square and selects its rows by position
# expect: fail diagnosis=window-edge-no-offset
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
    curr_mask_tensor = mask_tensor.index_select(2, input_positions_tensor)

    # GemmaAttention.forward, attn_type == LOCAL_SLIDING
    mask = curr_mask_tensor
    all_ones = torch.ones_like(mask)
    sliding_mask = torch.triu(
        all_ones, -1 * sliding_window_size + 1
    ) * torch.tril(all_ones, sliding_window_size - 1)
    mask = torch.where(sliding_mask == 1, mask, -2.3819763e38)
    return mask


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
