# quizprep: exercise=attention
# style: "softmax in float32 for stability", the probabilities never cast back before the value matmul
# expect: fail diagnosis=dtype-mixed
# bug: weights stay float32 while v is float16/float64, so torch.matmul raises a dtype mismatch
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.mT
    scores = scores / math.sqrt(k.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    probs = F.softmax(scores.float(), dim=-1)
    out = torch.matmul(probs, v)
    return out, probs.type_as(q)
