# quizprep: exercise=mha
# source: a one-line slip on google-research/bert modeling.py @ eedf5716ce1268e56f0a50264a88cafad334ac61 (attention_layer: dense query/key/value on the 2-D [B*S, width] tensors, transpose_for_scores = tf.reshape to [B, S, N, H] then tf.transpose [0, 2, 1, 3], scores = matmul(q, k, transpose_b=True) * 1/sqrt(size_per_head), adder = (1.0 - mask) * -10000.0, tf.nn.softmax, value reshaped and transposed inline, context transposed back [0, 2, 1, 3] and reshaped to [B, F, N*H])
# style: TF1 BERT: projections applied to 2-D [B*S, width] matrices, a nested transpose_for_scores helper for q and k while v is reshaped inline, a 0/1 mask made into an additive -10000 bias, the softmax in the scores' dtype, 2-space indentation
# adapter: tf.layers.dense → the module's nn.Linear W_q, W_k, W_v (created once instead of by name scope) and W_o applied after attention_layer (BERT's output dense lives in transformer_model); tf.reshape/tf.transpose → reshape/permute; value_layer projects the module's `value` argument (BERT projects to_tensor for both key and value: the contract passes them separately); the contract's mask is already broadcastable to [B, N, F, T], so tf.expand_dims(attention_mask, axis=[1]) is dropped and the adder is cast to the scores' dtype instead of tf.float32; dropout 0; returns (output, attention_probs)
# bug: slip of ours: transpose_for_scores reshapes straight to [B, N, S, H] and drops its tf.transpose, so q and k are split into heads without the transpose (each "head" is a block of consecutive features of several positions); v, reshaped inline, is still split correctly
# expect: fail diagnosis=split-no-transpose
from __future__ import annotations

import math

import torch
from torch import nn


def transpose_for_scores(input_tensor, batch_size, num_attention_heads,
                         seq_length, width):
  output_tensor = input_tensor.reshape(
      [batch_size, num_attention_heads, seq_length, width])
  return output_tensor


def attention_layer(from_tensor, to_tensor, query, key, value, attention_mask=None,
                    value_tensor=None,
                    num_attention_heads=1, size_per_head=512):
  batch_size, from_seq_length = from_tensor.shape[0], from_tensor.shape[1]
  to_seq_length = to_tensor.shape[1]

  from_tensor_2d = from_tensor.reshape(-1, from_tensor.shape[-1])
  to_tensor_2d = to_tensor.reshape(-1, to_tensor.shape[-1])

  # `query_layer` = [B*F, N*H]
  query_layer = query(from_tensor_2d)
  # `key_layer` = [B*T, N*H]
  key_layer = key(to_tensor_2d)
  # `value_layer` = [B*T, N*H]
  value_layer = value(value_tensor.reshape(-1, value_tensor.shape[-1]))

  # `query_layer` = [B, N, F, H]
  query_layer = transpose_for_scores(query_layer, batch_size,
                                     num_attention_heads, from_seq_length,
                                     size_per_head)

  # `key_layer` = [B, N, T, H]
  key_layer = transpose_for_scores(key_layer, batch_size, num_attention_heads,
                                   to_seq_length, size_per_head)

  # Take the dot product between "query" and "key" to get the raw
  # attention scores.
  # `attention_scores` = [B, N, F, T]
  attention_scores = torch.matmul(query_layer, key_layer.transpose(-2, -1))
  attention_scores = torch.multiply(attention_scores,
                                    1.0 / math.sqrt(float(size_per_head)))

  if attention_mask is not None:
    # Since attention_mask is 1.0 for positions we want to attend and 0.0 for
    # masked positions, this operation will create a tensor which is 0.0 for
    # positions we want to attend and -10000.0 for masked positions.
    adder = (1.0 - attention_mask.to(attention_scores.dtype)) * -10000.0

    # Since we are adding it to the raw scores before the softmax, this is
    # effectively the same as removing these entirely.
    attention_scores += adder

  # Normalize the attention scores to probabilities.
  # `attention_probs` = [B, N, F, T]
  attention_probs = torch.softmax(attention_scores, dim=-1)

  # `value_layer` = [B, T, N, H]
  value_layer = value_layer.reshape(
      [batch_size, to_seq_length, num_attention_heads, size_per_head])

  # `value_layer` = [B, N, T, H]
  value_layer = value_layer.permute(0, 2, 1, 3)

  # `context_layer` = [B, N, F, H]
  context_layer = torch.matmul(attention_probs, value_layer)

  # `context_layer` = [B, F, N, H]
  context_layer = context_layer.permute(0, 2, 1, 3)

  # `context_layer` = [B, F, N*H]
  context_layer = context_layer.reshape(
      [batch_size, from_seq_length, num_attention_heads * size_per_head])

  return context_layer, attention_probs


class MultiHeadAttention(nn.Module):
  def __init__(self, d_model: int, n_heads: int) -> None:
    super().__init__()
    self.n_heads = n_heads
    self.size_per_head = d_model // n_heads
    self.W_q = nn.Linear(d_model, d_model)
    self.W_k = nn.Linear(d_model, d_model)
    self.W_v = nn.Linear(d_model, d_model)
    self.W_o = nn.Linear(d_model, d_model)

  def forward(self, query, key, value, mask=None):
    context, probs = attention_layer(query, key, self.W_q, self.W_k, self.W_v, mask,
                                     num_attention_heads=self.n_heads,
                                     size_per_head=self.size_per_head, value_tensor=value)
    return self.W_o(context), probs
