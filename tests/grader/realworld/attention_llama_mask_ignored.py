# quizprep: exercise=attention
# style: Llama-like: matmul / sqrt(head_dim), F.softmax(scores, dim=-1)
# expect: fail diagnosis=mask-ignored
# bug: the masked_fill result is thrown away (not assigned), so the mask has no effect
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    head_dim = q.shape[-1]
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(head_dim)
    if mask is not None:
        scores.masked_fill(~mask, float("-inf"))
    scores = F.softmax(scores, dim=-1)
    return torch.matmul(scores, v), scores
