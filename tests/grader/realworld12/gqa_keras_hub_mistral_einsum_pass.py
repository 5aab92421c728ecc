# quizprep: exercise=gqa
# source: keras-team/keras-hub keras_hub/src/models/mistral/mistral_attention.py @ 71453d08f59edc90d276e999319fc51e61cbf82c (CachedMistralAttention: EinsumDense projections "bqm,muh->bquh" and "bkm,mvh->bkvh", key and value expanded with ops.repeat(key, repeats=num_key_value_groups, axis=2), scores einsum "bquh,bkuh->buqk" times 1/sqrt(head_dim), keras.layers.Softmax(axis=-1, dtype="float32") with the mask [:, None, :, :], cast back to the compute dtype, combine einsum "buqk,bkuh->bquh", output EinsumDense "bquh,uhm->bqm"); keras-team/keras keras/src/layers/activations/softmax.py (Softmax.call with a mask: where(mask, inputs, -1e9), -3e4 for float16; commit not recorded: read through the code search)
# style: Keras 3 backend-neutral ops: every projection an einsum against a 3-D kernel (model dim, heads, head dim), heads never reshaped or transposed, GQA by ops.repeat (NumPy's repeat, i.e. repeat_interleave) on the head axis, the softmax a float32 layer that masks with a finite -1e9
# adapter: ops.* → torch.* (ops.einsum → torch.einsum, ops.repeat → repeat_interleave, ops.multiply/ops.cast → * / .to); EinsumDense kernels taken from the contract's nn.Linear weights (W_q.weight (H*h, m) → kernel (m, H, h) by .T.reshape, W_o.weight (m, H*h) → kernel (H, h, m)); no RoPE, no cache, no flash/vLLM routes, dropout 0; the Softmax layer's float32 dtype policy is an upcast of the scores; the mask arrives broadcastable to (B, H, T, T), so the [:, None, :, :] head axis is added only to a 3-D mask
# expect: pass
from __future__ import annotations

import math

import torch
from torch import nn


def _large_negative_number(dtype):
    if dtype == torch.float16:
        return -3e4
    return -1e9


def keras_softmax(inputs, mask=None):
    # keras.layers.Softmax(axis=-1, dtype="float32")
    inputs = inputs.to(torch.float32)
    if mask is not None:
        inputs = torch.where(mask, inputs, _large_negative_number(inputs.dtype))
    return torch.softmax(inputs, dim=-1)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self._num_query_heads = n_heads
        self._num_key_value_heads = n_kv_heads
        self._num_key_value_groups = n_heads // n_kv_heads
        self._hidden_dim = d_model
        self._head_dim = d_model // n_heads
        self._inv_norm_factor = 1.0 / math.sqrt(self._head_dim)
        self.W_q = nn.Linear(d_model, n_heads * self._head_dim, bias=False)
        self.W_k = nn.Linear(d_model, n_kv_heads * self._head_dim, bias=False)
        self.W_v = nn.Linear(d_model, n_kv_heads * self._head_dim, bias=False)
        self.W_o = nn.Linear(n_heads * self._head_dim, d_model, bias=False)
        self._dot_product_equation = "bquh,bkuh->buqk"
        self._combine_equation = "buqk,bkuh->bquh"

    def _kernel(self, linear, heads):
        return linear.weight.T.reshape(self._hidden_dim, heads, self._head_dim)

    def _masked_softmax(self, attention_scores, attention_mask=None):
        if attention_mask is not None:
            if attention_mask.dim() == 3:
                attention_mask = attention_mask[:, None, :, :]
            return keras_softmax(attention_scores, attention_mask)
        return keras_softmax(attention_scores)

    def _compute_attention(self, query, key, value, attention_mask=None):
        attention_scores = torch.einsum(self._dot_product_equation, query, key)
        attention_scores = torch.multiply(
            attention_scores,
            torch.tensor(self._inv_norm_factor, dtype=query.dtype),
        )
        attention_scores = self._masked_softmax(attention_scores, attention_mask)
        attention_scores = attention_scores.to(query.dtype)
        attention_output = torch.einsum(self._combine_equation, attention_scores, value)
        return attention_output

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        hidden_states = x
        query = torch.einsum("bqm,muh->bquh", hidden_states, self._kernel(self.W_q, self._num_query_heads))
        key = torch.einsum("bkm,mvh->bkvh", hidden_states, self._kernel(self.W_k, self._num_key_value_heads))
        value = torch.einsum("bkm,mvh->bkvh", hidden_states, self._kernel(self.W_v, self._num_key_value_heads))

        # [batch_shape, seq_len, num_key_value_heads, head_dim]
        # -> [batch_shape, seq_len, num_heads, head_dim]
        key = torch.repeat_interleave(key, repeats=self._num_key_value_groups, dim=2)
        value = torch.repeat_interleave(value, repeats=self._num_key_value_groups, dim=2)

        attention_output = self._compute_attention(query, key, value, mask)

        output_kernel = self.W_o.weight.T.reshape(self._num_query_heads, self._head_dim, self._hidden_dim)
        attention_output = torch.einsum("bquh,uhm->bqm", attention_output, output_kernel)
        return attention_output
