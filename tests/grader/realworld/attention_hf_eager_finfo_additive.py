# quizprep: exercise=attention
# style: Hugging Face-like eager attention: scaling = head_dim**-0.5, additive mask of torch.finfo(dtype).min, dropout(training=False)
# expect: pass
import torch
from torch import nn


def eager_attention(query_states, key_states, value_states, attention_mask, scaling, dropout=0.0, training=False):
    attn_weights = query_states @ key_states.transpose(-1, -2) * scaling
    if attention_mask is not None:
        attn_weights += attention_mask
    probs = nn.functional.softmax(attn_weights, dim=-1)
    probs = nn.functional.dropout(probs, p=dropout, training=training)
    return probs @ value_states, probs


def scaled_dot_product_attention(q, k, v, mask=None):
    attention_mask = None
    if mask is not None:
        min_dtype = torch.finfo(q.dtype).min
        attention_mask = torch.full(mask.shape, min_dtype, dtype=q.dtype, device=q.device)
        attention_mask = attention_mask.masked_fill(mask, 0.0)
    return eager_attention(q, k, v, attention_mask, scaling=q.shape[-1] ** -0.5)
