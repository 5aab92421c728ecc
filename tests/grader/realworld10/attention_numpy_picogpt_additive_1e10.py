# quizprep: exercise=attention-numpy
# source: jaymody/picoGPT gpt2.py @ dfb5df895a7a6b18705866a0bf7ec04947d8e05a (attention(q, k, v, mask) = softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v on one head's 2-D arrays; mha: causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10, heads looped with zip; softmax: np.exp(x - np.max(x, axis=-1, keepdims=True)) / sum)
# style: picoGPT's 2-D attention, one head at a time in a Python loop, k.T on 2-D arrays; the mask turned into an additive float mask (1 - mask) * -1e10 in the activations' dtype
# adapter: the loop runs over every leading index (np.ndindex), as picoGPT's zip runs over heads; the given boolean mask (all True when None) takes the place of np.tri in (1 - mask) * -1e10, built in q's dtype as picoGPT builds it in x's; the softmax weights are returned as well
# expect: fail diagnosis=fill-overflow
# bug: as published arithmetic: picoGPT only runs float32, where -1e10 is finite; in float16 the constant overflows to -inf and the allowed positions compute 0 · (-inf) = NaN, so every float16 output is NaN
from __future__ import annotations

import numpy as np


def softmax(x):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def attention(q, k, v, mask):  # [n_q, d_k], [n_k, d_k], [n_k, d_v], [n_q, n_k] -> [n_q, d_v]
    w = softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask)
    return w @ v, w


def scaled_dot_product_attention(q, k, v, mask=None):
    lead = q.shape[:-2]
    n, m = q.shape[-2], k.shape[-2]
    if mask is None:
        mask = np.ones((n, m), dtype=bool)
    additive = (1 - np.broadcast_to(mask, lead + (n, m)).astype(q.dtype)) * -1e10
    out = np.empty(lead + (n, v.shape[-1]), dtype=q.dtype)
    weights = np.empty(lead + (n, m), dtype=q.dtype)
    for idx in np.ndindex(*lead):
        out[idx], weights[idx] = attention(q[idx], k[idx], v[idx], additive[idx])
    return out, weights
