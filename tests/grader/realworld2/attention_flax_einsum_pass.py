# quizprep: exercise=attention
# style: JAX/flax dot_product_attention translated to torch: einsum with ellipsis, finfo.min fill, `mask == False`
# expect: pass
from __future__ import annotations

import torch


def dot_product_attention_weights(query, key, mask=None):
    depth = query.shape[-1]
    query = query / torch.tensor(depth, dtype=query.dtype).sqrt()
    attn_weights = torch.einsum("...qd,...kd->...qk", query, key)
    if mask is not None:
        big_neg = torch.finfo(attn_weights.dtype).min
        attn_weights = attn_weights.masked_fill(mask == False, big_neg)  # noqa: E712
    return torch.softmax(attn_weights, dim=-1)


def scaled_dot_product_attention(q, k, v, mask=None):
    attn_weights = dot_product_attention_weights(q, k, mask)
    return torch.einsum("...qk,...kd->...qd", attn_weights, v), attn_weights
