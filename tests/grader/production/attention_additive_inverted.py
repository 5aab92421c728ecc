# quizprep: exercise=attention
# style: additive float mask built from the boolean mask, with the sign of the test flipped
# expect: fail diagnosis=mask-inverted
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.einsum("...id,...jd->...ij", q, k) / q.shape[-1] ** 0.5
    if mask is not None:
        scores = scores + mask.to(scores.dtype) * -1e9
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...ij,...jd->...id", weights, v), weights
