# quizprep: exercise=attention
# expect: check=stability diagnosis=no-max-shift
import math
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    exps = scores.exp()  # BUG
    weights = exps / exps.sum(dim=-1, keepdim=True)
    return weights @ v, weights
