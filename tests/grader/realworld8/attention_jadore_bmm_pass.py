# quizprep: exercise=attention
# source: jadore801120/attention-is-all-you-need-pytorch transformer/Modules.py @ 002815545bf743d0bf2b9d172af047b37e20b6e9 (ScaledDotProductAttention.forward: bmm, divide by temper, attn.data.masked_fill_(attn_mask, -inf), softmax, bmm)
# style: leading dims flattened to one bmm batch, the repo's mask convention (True = masked), in-place fill through .data
# adapter: temper = √d_k (the repo passes it in), the exercise's mask inverted and expanded to the repo's (batch, n, m), no dropout, shapes restored
# expect: pass
import numpy as np
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    lead, n, m = q.shape[:-2], q.shape[-2], k.shape[-2]
    q3, k3, v3 = (t.reshape(-1, t.shape[-2], t.shape[-1]) for t in (q, k, v))
    temper = np.power(q.shape[-1], 0.5)
    attn = torch.bmm(q3, k3.transpose(1, 2)) / temper
    if mask is not None:
        attn_mask = (~mask.bool()).expand(*lead, n, m).reshape(-1, n, m)
        assert attn_mask.size() == attn.size()
        attn.data.masked_fill_(attn_mask, -float("inf"))
    attn = torch.softmax(attn, dim=-1)
    output = torch.bmm(attn, v3)
    return output.reshape(*lead, n, v.shape[-1]), attn.reshape(*lead, n, m)
