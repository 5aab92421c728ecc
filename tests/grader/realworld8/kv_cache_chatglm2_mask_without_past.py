# quizprep: exercise=kv-cache
# source: a slip on THUDM/ChatGLM2-6B modeling_chatglm.py (SelfAttention.forward: kv_cache joined with torch.cat((cache_k, key_layer), dim=0) on its [sq, b, np, hn] layout; multi-query groups widened with key_layer.unsqueeze(-2).expand(-1, -1, -1, heads // groups, -1).contiguous().view(...); ChatGLMModel.get_masks: tril_ on ones(seq, seq), ones(seq, past_length) concatenated in front, then `< 0.5` marks what to hide)
# style: sequence-first layout, the expand-then-view widening of KV groups, a 0/1 mask with past columns prepended and inverted by comparison
# adapter: the exercise's (B, G, T, d) cache converted to and from ChatGLM's [sq, b, np, hn]; weights given as tensors (x @ W.T); CoreAttention's F.scaled_dot_product_attention written out with masked_fill(-inf)
# expect: fail diagnosis=kv-mask-no-offset
# bug: get_masks without its past_length columns: a (t, t) mask against (t, T + t) scores; right on the prompt (T = 0), a broadcast crash for a chunk of new tokens on a filled cache
import math

import torch


def append_kv(cache_k, cache_v, k, v):
    return torch.cat((cache_k, k), dim=2), torch.cat((cache_v, v), dim=2)


def get_masks(batch, seq_length, past_length, device):
    full_attention_mask = torch.ones(batch, seq_length, seq_length, device=device)
    full_attention_mask.tril_()
    full_attention_mask = (full_attention_mask < 0.5).bool()
    return full_attention_mask.unsqueeze(1)


def _widen(layer, heads):
    sq, b, groups, hn = layer.shape
    layer = layer.unsqueeze(-2).expand(-1, -1, -1, heads // groups, -1)
    return layer.contiguous().view(sq, b, heads, hn)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    b, sq, _ = x.shape
    hn = W_q.shape[0] // n_heads
    groups = W_k.shape[0] // hn
    hidden = x.transpose(0, 1)
    query_layer = (hidden @ W_q.T).view(sq, b, n_heads, hn)
    key_layer = (hidden @ W_k.T).view(sq, b, groups, hn)
    value_layer = (hidden @ W_v.T).view(sq, b, groups, hn)
    cache_k, cache_v = append_kv(cache_k, cache_v, key_layer.permute(1, 2, 0, 3), value_layer.permute(1, 2, 0, 3))
    key_layer = _widen(cache_k.permute(2, 0, 1, 3), n_heads)
    value_layer = _widen(cache_v.permute(2, 0, 1, 3), n_heads)
    q, k, v = (t.permute(1, 2, 0, 3) for t in (query_layer, key_layer, value_layer))
    scores = q @ k.transpose(-2, -1) / math.sqrt(hn)
    attention_mask = get_masks(b, sq, cache_k.shape[2] - sq, x.device)
    scores = scores.masked_fill(attention_mask, float("-inf"))
    context = torch.softmax(scores, dim=-1) @ v
    context = context.permute(2, 0, 1, 3).reshape(sq, b, n_heads * hn).transpose(0, 1)
    return context @ W_o.T, cache_k, cache_v
