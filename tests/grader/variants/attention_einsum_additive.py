# quizprep: exercise=attention
# Correct: einsum and an additive -1e9 mask.
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.einsum("...nd,...md->...nm", q, k) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = scores + (~mask).to(scores.dtype) * torch.finfo(scores.dtype).min / 2
    weights = scores.softmax(dim=-1)
    return torch.einsum("...nm,...md->...nd", weights, v), weights
