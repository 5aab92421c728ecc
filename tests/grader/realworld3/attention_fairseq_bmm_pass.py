# quizprep: exercise=attention
# style: fairseq-like: scale q first, flatten the leading dims and use bmm
# expect: pass
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    lead, n, d = q.shape[:-2], q.shape[-2], q.shape[-1]
    m, dv = k.shape[-2], v.shape[-1]
    scaling = d ** -0.5
    qf = (q * scaling).reshape(-1, n, d)
    kf, vf = k.reshape(-1, m, d), v.reshape(-1, m, dv)
    attn_weights = torch.bmm(qf, kf.transpose(1, 2)).view(*lead, n, m)
    if mask is not None:
        attn_weights = attn_weights.masked_fill(~mask, float("-inf"))
    attn_probs = torch.softmax(attn_weights.float(), dim=-1).to(q.dtype)
    out = torch.bmm(attn_probs.reshape(-1, n, m), vf).view(*lead, n, dv)
    return out, attn_probs
