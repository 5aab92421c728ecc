# quizprep: exercise=attention
# expect: check=mask-causal diagnosis=mask-ignored unread=mask
import math
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
