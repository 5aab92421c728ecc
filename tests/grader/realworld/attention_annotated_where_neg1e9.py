# quizprep: exercise=attention
# style: Annotated Transformer-like attention(query, key, value, mask, dropout) helper: mask == 0 test, -1e9 fill (via torch.where), p_attn
# expect: pass
import math

import torch


def attention(query, key, value, mask=None, dropout=None):
    scale = 1 / math.sqrt(query.size(-1))
    scores = query.matmul(key.transpose(-2, -1)) * scale
    if mask is not None:
        scores = torch.where(mask == 0, -1e9, scores)
    p_attn = torch.softmax(scores, dim=-1)
    p_attn = p_attn if dropout is None else dropout(p_attn)
    return p_attn.matmul(value), p_attn


def scaled_dot_product_attention(q, k, v, mask=None):
    return attention(q, k, v, mask=mask)
