# quizprep: exercise=attention
# style: Meta Llama reference: additive 0/-inf mask added to the scores, F.softmax(scores.float(), dim=-1).type_as(q)
# expect: pass
# note: the upcast is limited to half inputs; the unguarded idiom rounds float64 inputs to float32 (~1e-7 error)
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    head_dim = q.shape[-1]
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(head_dim)
    if mask is not None:
        # Llama takes an additive float mask; build one from the boolean mask
        additive = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)
        additive = additive.masked_fill(~mask, float("-inf"))
        scores = scores + additive
    if scores.dtype in (torch.float16, torch.bfloat16):
        scores = F.softmax(scores.float(), dim=-1).type_as(q)
    else:
        scores = F.softmax(scores, dim=-1)
    output = torch.matmul(scores, v)
    return output, scores
