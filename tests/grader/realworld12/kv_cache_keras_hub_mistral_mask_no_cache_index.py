# quizprep: exercise=kv-cache
# source: a one-line slip on keras-team/keras-hub keras_hub/src/models/mistral/mistral_attention.py, keras_hub/src/models/mistral/mistral_transformer_decoder.py and keras_hub/src/layers/modeling/transformer_layer_utils.py @ 71453d08f59edc90d276e999319fc51e61cbf82c (CachedMistralAttention.call: key_update, value_update from the EinsumDense projections, written into the cache with ops.slice_update(key_cache, [0, cache_update_index, 0, 0], key_update), keys expanded with ops.repeat(axis=2), einsum scores times 1/sqrt(head_dim), a float32 masked Softmax, combine einsum, output EinsumDense; MistralTransformerDecoder._compute_self_attention_mask: input_length = the cache's length, causal_mask = compute_causal_mask(batch_size, input_length, output_length, cache_update_index), where compute_causal_mask builds i = arange(output_length) + cache_index, j = arange(input_length), mask = i >= j)
# style: Keras 3 generation: a preallocated (B, 2, max_len, G, d) cache updated with slice_update at cache_update_index, einsums against 3-D kernels with heads never reshaped, GQA by ops.repeat on the head axis, a boolean causal mask offset by the cache index, a float32 Softmax layer that masks with -1e9
# adapter: the contract's growing cache instead of the preallocated one: append_kv concatenates after the T cached positions (what slice_update at cache_update_index = T does to a cache whose first T rows are filled), in the contract's (B, G, T, d) layout, transposed to Keras's (B, T, G, d) for the einsums; EinsumDense kernels from the contract's weights (W_q (H*h, m) → (m, H, h), W_o (m, H*h) → (H, h, m)); no RoPE, sliding_window=None, no padding mask, no flash/vLLM routes, dropout 0; keras.layers.Softmax(dtype="float32") with a mask as where(mask, x, -1e9) after an upcast; the mask moved to the inputs' device (added after the first grading: the port had left it on the CPU, where Keras and gemma_pytorch put it on the model's device)
# bug: slip of ours: the decoder's mask is compute_causal_mask(batch_size, input_length, output_length) with the cache_update_index argument left out (it defaults to 0), so new token i is masked as if it sat at position i: in decode it sees only the first cached key(s), not the whole cache
# expect: fail diagnosis=kv-mask-no-offset
from __future__ import annotations

import math

import torch


def compute_causal_mask(batch_size, input_length, output_length, cache_index=0):
    i = torch.arange(output_length, dtype=torch.float32)
    i = i + float(cache_index)
    i = i[:, None]
    j = torch.arange(input_length, dtype=torch.float32)
    mask = (i >= j)[None]
    return mask.broadcast_to((batch_size, output_length, input_length))


def keras_softmax(inputs, mask=None):
    inputs = inputs.to(torch.float32)
    if mask is not None:
        inputs = torch.where(mask, inputs, -1e9)
    return torch.softmax(inputs, dim=-1)


def append_kv(cache_k, cache_v, k, v):
    return torch.cat([cache_k, k], dim=2), torch.cat([cache_v, v], dim=2)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    hidden_states = x
    batch_size, output_length, hidden_dim = x.shape
    num_query_heads = n_heads
    head_dim = W_q.shape[0] // num_query_heads
    num_key_value_heads = W_k.shape[0] // head_dim
    num_key_value_groups = num_query_heads // num_key_value_heads
    inv_norm_factor = 1.0 / math.sqrt(head_dim)
    cache_update_index = cache_k.shape[2]

    query = torch.einsum("bqm,muh->bquh", hidden_states, W_q.T.reshape(hidden_dim, num_query_heads, head_dim))
    key_update = torch.einsum("bkm,mvh->bkvh", hidden_states, W_k.T.reshape(hidden_dim, num_key_value_heads, head_dim))
    value_update = torch.einsum("bkm,mvh->bkvh", hidden_states, W_v.T.reshape(hidden_dim, num_key_value_heads, head_dim))

    new_k, new_v = append_kv(cache_k, cache_v, key_update.transpose(1, 2), value_update.transpose(1, 2))
    key, value = new_k.transpose(1, 2), new_v.transpose(1, 2)

    # MistralTransformerDecoder._compute_self_attention_mask
    input_length = key.shape[1]
    attention_mask = compute_causal_mask(batch_size, input_length, output_length)

    # [batch_shape, seq_len, num_key_value_heads, head_dim]
    # -> [batch_shape, seq_len, num_heads, head_dim]
    key = torch.repeat_interleave(key, repeats=num_key_value_groups, dim=2)
    value = torch.repeat_interleave(value, repeats=num_key_value_groups, dim=2)

    attention_scores = torch.einsum("bquh,bkuh->buqk", query, key)
    attention_scores = torch.multiply(attention_scores, torch.tensor(inv_norm_factor, dtype=x.dtype, device=x.device))
    attention_scores = keras_softmax(attention_scores, attention_mask[:, None, :, :].to(x.device))
    attention_scores = attention_scores.to(x.dtype)
    attention_output = torch.einsum("buqk,bkuh->bquh", attention_scores, value)

    attention_output = torch.einsum("bquh,uhm->bqm", attention_output, W_o.T.reshape(num_query_heads, head_dim, hidden_dim))
    return attention_output, new_k, new_v
