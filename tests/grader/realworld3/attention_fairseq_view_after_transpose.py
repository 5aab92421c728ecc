# quizprep: exercise=attention
# style: fairseq-like bmm over flattened heads, flattening with .view
# expect: fail diagnosis=view-non-contiguous
# bug: .view on inputs that arrive transposed or expanded; .reshape copies when it must
import math
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    *lead, n, d = q.shape
    m = k.shape[-2]
    qf, kf, vf = q.view(-1, n, d), k.view(-1, m, d), v.view(-1, m, v.shape[-1])
    w = torch.bmm(qf, kf.transpose(1, 2)).view(*lead, n, m) / math.sqrt(d)
    if mask is not None:
        w = w.masked_fill(~mask, float("-inf"))
    p = torch.softmax(w, dim=-1)
    return torch.bmm(p.reshape(-1, n, m), vf).view(*lead, n, v.shape[-1]), p
