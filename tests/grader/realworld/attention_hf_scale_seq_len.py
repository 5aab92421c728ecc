# quizprep: exercise=attention
# style: Hugging Face-like eager attention with an additive torch.finfo(dtype).min mask
# expect: fail diagnosis=scale-seq-len
# bug: "d_k" is read from the wrong axis, query.size(-2) (the number of queries)
import math

import torch
from torch import nn


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.size(-2)
    attn_weights = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d_k)
    if mask is not None:
        causal_mask = torch.zeros(mask.shape, dtype=q.dtype, device=q.device)
        causal_mask = causal_mask.masked_fill(~mask, torch.finfo(q.dtype).min)
        attn_weights = attn_weights + causal_mask
    attn_weights = nn.functional.softmax(attn_weights, dim=-1)
    return torch.matmul(attn_weights, v), attn_weights
