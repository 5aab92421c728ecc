# quizprep: exercise=attention
# style: Llama / Hugging Face eager attention: softmax accumulated in float32, cast back with type_as
# expect: pass
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(2, 3) if q.dim() == 4 else k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = F.softmax(scores.float(), dim=-1).type_as(q)
    return torch.matmul(weights, v), weights
