# quizprep: exercise=kv-cache
# style: GPT-2-like step that multiplies by the weights as Conv1D stores them (in, out)
# expect: fail diagnosis=weight-transposed
# bug: x @ W_k instead of x @ W_k.T on nn.Linear-layout weights
import math

import torch


def append_kv(cache_k, cache_v, k, v):
    return torch.cat((cache_k, k), dim=-2), torch.cat((cache_v, v), dim=-2)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    batch, steps, _ = x.shape
    head_dim = W_q.shape[0] // n_heads
    kv_heads = W_k.shape[0] // head_dim
    query = (x @ W_q).view(batch, steps, n_heads, head_dim).permute(0, 2, 1, 3)
    key = (x @ W_k).view(batch, steps, kv_heads, head_dim).permute(0, 2, 1, 3)
    value = (x @ W_v).view(batch, steps, kv_heads, head_dim).permute(0, 2, 1, 3)
    cache_k, cache_v = append_kv(cache_k, cache_v, key, value)
    rep = n_heads // kv_heads
    keys, values = cache_k.repeat_interleave(rep, dim=1), cache_v.repeat_interleave(rep, dim=1)
    total = keys.shape[-2]
    w = torch.matmul(query, keys.transpose(-1, -2)) / math.sqrt(head_dim)
    causal = torch.ones(steps, total, dtype=torch.bool, device=x.device).tril(total - steps)
    w = torch.where(causal, w, torch.tensor(float("-inf"), dtype=w.dtype, device=w.device))
    a = torch.matmul(w.softmax(dim=-1), values)
    return a.permute(0, 2, 1, 3).reshape(batch, steps, -1) @ W_o, cache_k, cache_v
