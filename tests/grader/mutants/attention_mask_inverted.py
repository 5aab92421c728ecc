# quizprep: exercise=attention
# expect: check=mask-padding diagnosis=mask-inverted
import math
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))  # BUG
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
