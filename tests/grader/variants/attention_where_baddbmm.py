# quizprep: exercise=attention
# Correct: torch.where with -inf, NaN rows zeroed, matmul via flattened batches.
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    *lead, n, d = q.shape
    m = k.shape[-2]
    qf, kf, vf = q.reshape(-1, n, d), k.reshape(-1, m, d), v.reshape(-1, m, v.shape[-1])
    scores = torch.bmm(qf, kf.transpose(1, 2)).reshape(*lead, n, m) / math.sqrt(d)
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    out = torch.bmm(weights.reshape(-1, n, m), vf).reshape(*lead, n, v.shape[-1])
    return out, weights
