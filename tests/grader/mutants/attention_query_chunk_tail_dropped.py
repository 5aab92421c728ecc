# quizprep: exercise=attention
# expect: check=mask-padding diagnosis=query-rows-dropped
import math
import torch

CHUNK = 2


def scaled_dot_product_attention(q, k, v, mask=None):
    n = q.shape[-2]
    outs, maps = [], []
    for start in range(0, n // CHUNK * CHUNK, CHUNK):  # a short last chunk is never visited
        scores = q[..., start:start + CHUNK, :] @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            rows = mask.expand(*mask.shape[:-2], n, mask.shape[-1])[..., start:start + CHUNK, :]
            scores = scores.masked_fill(~rows, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        outs.append(weights @ v)
        maps.append(weights)
    return torch.cat(outs, dim=-2), torch.cat(maps, dim=-2)
