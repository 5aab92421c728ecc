# quizprep: exercise=attention
# masked_fill(mask == 0, -1e9) in every dtype: -1e9 does not fit in float16
import math
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
