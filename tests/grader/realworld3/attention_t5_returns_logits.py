# quizprep: exercise=attention
# style: T5-like attention whose "weights" output is the position-bias-ready scores
# expect: fail diagnosis=weights-are-logits
# bug: returns the masked scores, before the softmax, as the weights
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(3, 2) if q.dim() == 4 else k.transpose(-1, -2))
    scores = scores / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    attn_weights = torch.softmax(scores.float(), dim=-1).type_as(scores)
    attn_output = torch.matmul(attn_weights, v)
    return attn_output, scores
