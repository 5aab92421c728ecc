# quizprep: exercise=attention
# style: minGPT-like attention dropout with F.dropout, whose training flag defaults to True
# expect: fail diagnosis=dropout-active
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    if mask is not None:
        att = att.masked_fill(~mask, float("-inf"))
    att = F.softmax(att, dim=-1)
    att = F.dropout(att, p=0.1)
    return att @ v, att
