# quizprep: exercise=attention
# source: d2l-ai/d2l-en chapter_attention-mechanisms-and-transformers (masked_softmax: X = d2l.sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6); DotProductAttention: scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d))
# style: a masked_softmax helper that fills masked scores with the value -1e6 through a flat 2-D view, bmm with a 3-D batch
# adapter: the boolean mask stands for valid_lens (sequence_mask's X[~mask] = value written as masked_fill), leading dims flattened for bmm, no dropout, shapes restored
# expect: fail diagnosis=fill-overflow
# bug: -1e6 does not fit in float16 (largest 65504): masked_fill raises "value cannot be converted to type at::Half without overflow" on half-precision scores
import math

import torch
from torch.nn import functional as F


def masked_softmax(X, mask):
    if mask is None:
        return F.softmax(X, dim=-1)
    shape = X.shape
    X = X.reshape(-1, shape[-1]).masked_fill(~mask.reshape(-1, shape[-1]), -1e6)
    return F.softmax(X.reshape(shape), dim=-1)


def scaled_dot_product_attention(q, k, v, mask=None):
    lead, n, m, d = q.shape[:-2], q.shape[-2], k.shape[-2], q.shape[-1]
    queries, keys, values = (t.reshape(-1, t.shape[-2], t.shape[-1]) for t in (q, k, v))
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
    full = None if mask is None else mask.bool().expand(*lead, n, m).reshape(-1, n, m)
    attention_weights = masked_softmax(scores, full)
    out = torch.bmm(attention_weights, values)
    return out.reshape(*lead, n, v.shape[-1]), attention_weights.reshape(*lead, n, m)
