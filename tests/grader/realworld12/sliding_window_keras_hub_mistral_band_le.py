# quizprep: exercise=sliding-window
# source: a one-line slip on keras-team/keras-hub keras_hub/src/models/mistral/mistral_transformer_decoder.py, keras_hub/src/layers/modeling/transformer_layer_utils.py and keras_hub/src/models/mistral/mistral_attention.py @ 71453d08f59edc90d276e999319fc51e61cbf82c (MistralTransformerDecoder._compute_self_attention_mask: causal_mask = compute_causal_mask(batch_size, input_length, output_length, cache_update_index); with a sliding window, i = arange(output_length)[:, None] + cache_update_index, j = arange(input_length)[None, :], causal_mask_upper = cast(i < j + sliding_window, int32), causal_mask = minimum(causal_mask, causal_mask_upper), next to a commented-out `causal_mask = ops.triu(causal_mask, k=-self.sliding_window)`; CachedMistralAttention._compute_attention: einsum scores times 1/sqrt(head_dim), float32 masked Softmax, combine einsum)
# style: Keras 3 Mistral: the window written as a second comparison of absolute positions (i < j + W) min-ed into the causal mask, both offset by the cache index; (B, S, heads, d) einsums; a float32 Softmax layer masking with -1e9
# adapter: ops.* → torch.*; ops.minimum on Keras's int/bool masks done on int32 (Keras promotes the bool causal mask); cache_update_index = m - n (the queries are the last n positions, as the decoder's cached call sets it); q, k, v transposed from the contract's (B, H, S, d) to Keras's (B, S, H, d) and back; keras.layers.Softmax(dtype="float32") with a mask as where(mask, x, -1e9) after an upcast; no padding mask; the mask moved to the inputs' device (added after the first grading: the port had left it on the CPU, where Keras and gemma_pytorch put it on the model's device)
# bug: slip of ours: causal_mask_upper = cast(i <= j + sliding_window), `<=` for `<`, so each query keeps W + 1 keys (j >= p - W), what the file's own commented-out ops.triu(causal_mask, k=-self.sliding_window) would also keep on a square mask
# expect: fail diagnosis=window-wide
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


def _compute_self_attention_mask(batch_size, output_length, input_length, cache_update_index, sliding_window):
    # The lower traingular attention mask
    causal_mask = compute_causal_mask(batch_size, input_length, output_length, cache_update_index)

    # Mistral uses a banded attention mask if sliding window is not None
    if sliding_window is not None:
        # Below is a workaround for `ops.triu` for Keras 2.
        # TODO(tirthasheshpatel): Use `ops.triu` once Keras 2 support is
        # removed.
        # causal_mask = ops.triu(causal_mask, k=-self.sliding_window)
        i = torch.arange(output_length)[:, None] + cache_update_index
        j = torch.arange(input_length)[None, :]
        causal_mask_upper = (i <= j + sliding_window).to(torch.int32)
        causal_mask = torch.minimum(causal_mask.to(torch.int32), causal_mask_upper)

    return causal_mask


def sliding_window_mask(n, window, m=None):
    m = n if m is None else m
    return _compute_self_attention_mask(1, n, m, m - n, window)[0].to(torch.bool)


def keras_softmax(inputs, mask=None):
    # keras.layers.Softmax(axis=-1, dtype="float32")
    inputs = inputs.to(torch.float32)
    if mask is not None:
        inputs = torch.where(mask, inputs, -1e9)
    return torch.softmax(inputs, dim=-1)


def _compute_attention(query, key, value, attention_mask, inv_norm_factor):
    attention_scores = torch.einsum("bquh,bkuh->buqk", query, key)
    attention_scores = torch.multiply(attention_scores, torch.tensor(inv_norm_factor, dtype=query.dtype, device=query.device))
    attention_scores = keras_softmax(attention_scores, attention_mask[:, None, :, :].to(query.device))
    attention_scores = attention_scores.to(query.dtype)
    attention_output = torch.einsum("buqk,bkuh->bquh", attention_scores, value)
    return attention_output


def sliding_window_attention(q, k, v, window):
    batch_size, _, n, head_dim = q.shape
    m = k.shape[2]
    attention_mask = _compute_self_attention_mask(batch_size, n, m, m - n, window).to(torch.bool)
    query, key, value = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    out = _compute_attention(query, key, value, attention_mask, 1.0 / math.sqrt(head_dim))
    return out.transpose(1, 2)
