# quizprep: exercise=attention
# style: nanoGPT-like manual attention path: att = q @ k^T scaled by 1/sqrt(head size), masked_fill(mask == 0, -inf), F.softmax
# expect: pass
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    hs = q.size(-1)
    att = torch.matmul(q, k.transpose(-2, -1)).mul(1.0 / math.sqrt(hs))
    if mask is not None:
        att = att.masked_fill(mask == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    return att @ v, att
