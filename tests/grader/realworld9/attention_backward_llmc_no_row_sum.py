# quizprep: exercise=attention-backward
# source: a one-line slip on karpathy/llm.c train_gpt2.c @ db2454f88f1cdf0568c76d4c4bf2b1e0ed508cf0 (attention_forward's att = exp(preatt - maxval) / expsum over t2 <= t; attention_backward: datt and dvalue through the value accumulation, the softmax's local_derivative = att[t2] * (indicator - att[t3]), dquery and dkey with the scale)
# style: GPT-2 from scratch in C: the softmax's full Jacobian summed over t2 (so D appears as rowsum(att ∘ datt), not rowsum(dO ∘ O)), att recomputed by the forward's own softmax instead of from lse
# adapter: the C loops over b, t, h, t2, t3, i written as tensor operations (the double loop over t2, t3 summed in closed form); att recomputed as attention_forward does (the contract hands lse, not att); causal keys up to t + (m - n); the scale from the contract; query rows a block_size at a time; KV heads expanded for GQA and their gradients summed back
# expect: fail diagnosis=backward-no-delta
# bug: the softmax's backward kept only the indicator term: dpreatt = att * datt, without - att * rowsum(att * datt)
from __future__ import annotations

import math

import torch


def attention_forward_att(q, k, scale, causal):
    """llm.c's attention_forward, pass 1 and 2: preatt = q·k * scale over keys t2 <= t, maxval subtracted,
    att = exp(preatt - maxval) / expsum. The forward keeps att; the contract hands lse, so it is recomputed."""
    preatt = (q @ k.transpose(-1, -2)) * scale
    if causal:
        n, m = q.shape[-2], k.shape[-2]
        t = torch.arange(n, device=q.device)[:, None] + (m - n)
        t2 = torch.arange(m, device=q.device)[None, :]
        preatt = preatt.masked_fill(t2 > t, float("-inf"))
    maxval = preatt.amax(-1, keepdim=True)
    att = torch.exp(preatt - maxval)
    return att / att.sum(-1, keepdim=True)


def attention_backward_rows(dout, q, k, v, scale, causal):
    att = attention_forward_att(q, k, scale, causal)
    # backward pass 4, through the value accumulation: datt[t2] += value_t2·dout, dvalue_t2 += att[t2] * dout
    datt = dout @ v.transpose(-1, -2)
    dvalue = att.transpose(-1, -2) @ dout
    # backward pass 2 & 3, the softmax: dpreatt[t3] += att[t2] * (indicator - att[t3]) * datt[t2], summed over t2
    dpreatt = att * datt
    # backward pass 1, the query @ key matmul: dquery += key * dpreatt * scale, dkey += query * dpreatt * scale
    dquery = (dpreatt @ k) * scale
    dkey = (dpreatt.transpose(-1, -2) @ q) * scale
    return dquery, dkey, dvalue


def attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None):
    group = q.shape[1] // k.shape[1]
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    qf, do = q.float(), d_o.float()
    kf = k.float().repeat_interleave(group, dim=1)
    vf = v.float().repeat_interleave(group, dim=1)
    n, m = q.shape[-2], k.shape[-2]
    rows = block_size or n
    dq, dk, dv = torch.zeros_like(qf), torch.zeros_like(kf), torch.zeros_like(vf)
    for start in range(0, n, rows):  # adapter: query rows a block at a time, each seeing keys up to its own offset
        stop = min(start + rows, n)
        kb_len = m - (n - stop) if causal else m
        qb = qf[:, :, start:stop]
        dqb, dkb, dvb = attention_backward_rows(do[:, :, start:stop], qb, kf[:, :, :kb_len], vf[:, :, :kb_len],
                                                scale, causal)
        dq[:, :, start:stop] = dqb
        dk[:, :, :kb_len] += dkb
        dv[:, :, :kb_len] += dvb
    dk = dk.unflatten(1, (k.shape[1], group)).sum(2)
    dv = dv.unflatten(1, (k.shape[1], group)).sum(2)
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
