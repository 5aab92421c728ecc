# quizprep: exercise=kv-cache
# style: gpt-fast-like decode step: F.linear with the raw weight matrices, split heads with view + transpose, K/V expanded with repeat_interleave right after the projection, then appended, a boolean mask from positions (input_pos), F.softmax
# expect: fail diagnosis=kv-cache-expanded
# bug: K and V are expanded to the H query heads (repeat_interleave) BEFORE they are appended, so the cache stores H heads instead of G: GQA's memory saving is lost, and with G < H the new keys (H heads) no longer fit the cache the caller passes in (G heads), so torch.cat fails; correct for plain MHA (G == H)
import math

import torch
import torch.nn.functional as F


def append_kv(cache_k, cache_v, k, v):
    return torch.cat((cache_k, k), dim=2), torch.cat((cache_v, v), dim=2)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    bsz, seqlen, _ = x.shape
    head_dim = W_q.shape[0] // n_heads
    n_local_kv = W_k.shape[0] // head_dim
    q = F.linear(x, W_q).view(bsz, seqlen, n_heads, head_dim).transpose(1, 2)
    k = F.linear(x, W_k).view(bsz, seqlen, n_local_kv, head_dim).transpose(1, 2)
    v = F.linear(x, W_v).view(bsz, seqlen, n_local_kv, head_dim).transpose(1, 2)
    k = k.repeat_interleave(n_heads // n_local_kv, dim=1)
    v = v.repeat_interleave(n_heads // n_local_kv, dim=1)
    start = cache_k.shape[2]
    cache_k, cache_v = append_kv(cache_k, cache_v, k, v)
    input_pos = torch.arange(start, start + seqlen, device=x.device)
    key_pos = torch.arange(cache_k.shape[2], device=x.device)
    mask = key_pos[None, :] <= input_pos[:, None]
    scores = (q @ cache_k.transpose(-2, -1)) / math.sqrt(head_dim)
    scores = scores.masked_fill(~mask, float("-inf"))
    probs = F.softmax(scores, dim=-1)
    y = (probs @ cache_v).transpose(1, 2).contiguous().view(bsz, seqlen, n_heads * head_dim)
    return F.linear(y, W_o), cache_k, cache_v
