# quizprep: exercise=attention
# style: the Annotated Transformer with the mask test flipped (mask == 1 filled): an inverted mask in -1e9 style
# expect: fail diagnosis=mask-inverted
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 1, torch.finfo(scores.dtype).min)
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value), p_attn
