# quizprep: exercise=attention
# style: nanoGPT-like manual attention path, masked_fill(mask == 0, -inf)
# expect: fail diagnosis=no-scale
# bug: the 1/sqrt(d_k) factor is missing from the scores
import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    att = torch.matmul(q, k.transpose(-2, -1))
    if mask is not None:
        att = att.masked_fill(mask == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    return att @ v, att
