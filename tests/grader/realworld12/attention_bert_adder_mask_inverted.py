# quizprep: exercise=attention
# source: a one-line slip on google-research/bert modeling.py @ eedf5716ce1268e56f0a50264a88cafad334ac61 (attention_layer: attention_scores = tf.matmul(query_layer, key_layer, transpose_b=True) * 1.0 / math.sqrt(float(size_per_head)); attention_mask [B, F, T] of 1 = may attend, expanded at axis 1; adder = (1.0 - tf.cast(attention_mask, tf.float32)) * -10000.0; attention_scores += adder; attention_probs = tf.nn.softmax(attention_scores); context = tf.matmul(attention_probs, value_layer))
# style: TF1 BERT: a 0/1 mask turned into an additive -10000 bias (finite, so a fully masked row is uniform, not NaN), the softmax in the scores' dtype
# adapter: the score/softmax/context lines of attention_layer only, on q, k, v already split into heads (no dense layers, no transpose_for_scores); tf.matmul(..., transpose_b=True) → q @ k.transpose(-2, -1); the mask arrives broadcastable to the scores, so tf.expand_dims(attention_mask, axis=[1]) is dropped; the adder is cast to the scores' dtype instead of tf.float32 (BERT's graph is float32 throughout); attention_probs_dropout_prob = 0; returns (context, attention_probs)
# bug: slip of ours: `adder = tf.cast(attention_mask, tf.float32) * -10000.0`, the `1.0 -` dropped: the -10000 bias lands on the keys the mask allows and the masked keys get all the weight
# expect: fail diagnosis=mask-inverted
from __future__ import annotations

import math

import torch


def attention_layer(query_layer, key_layer, value_layer, attention_mask=None, size_per_head=None):
    attention_scores = torch.matmul(query_layer, key_layer.transpose(-2, -1))
    attention_scores = torch.multiply(attention_scores, 1.0 / math.sqrt(float(size_per_head)))

    if attention_mask is not None:
        adder = attention_mask.to(attention_scores.dtype) * -10000.0
        attention_scores += adder

    attention_probs = torch.softmax(attention_scores, dim=-1)

    context_layer = torch.matmul(attention_probs, value_layer)
    return context_layer, attention_probs


def scaled_dot_product_attention(q, k, v, mask=None):
    return attention_layer(q, k, v, mask, size_per_head=q.shape[-1])
