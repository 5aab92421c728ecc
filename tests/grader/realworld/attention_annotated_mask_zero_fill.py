# quizprep: exercise=attention
# style: Annotated Transformer-like, the mask applied by multiplication before the softmax
# expect: fail diagnosis=mask-zero-fill
# bug: masked scores become 0 (scores * mask) instead of -inf, so masked keys keep weight exp(0)
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores * mask
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, v), p_attn
