# quizprep: exercise=attention
# style: the Annotated Transformer: masked_fill(mask == 0, -1e9), with fp16 fills kept in range
# expect: pass
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        fill = -1e9 if scores.dtype not in (torch.float16,) else -1e4
        scores = scores.masked_fill(mask == 0, fill)
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value), p_attn
