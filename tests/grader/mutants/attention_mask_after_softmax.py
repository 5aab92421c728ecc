# quizprep: exercise=attention
# expect: check=mask-padding diagnosis=mask-after-softmax
import math
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # BUG
    return weights @ v, weights
