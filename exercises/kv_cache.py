"""Exercise: a KV cache and the decode step of a causal grouped-query attention layer.

    append_kv(cache_k, cache_v, k, v) -> (cache_k, cache_v)
    decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads) -> (out, cache_k, cache_v)

The cache is a pair of tensors (B, G, T, d_head): the keys and values of the T positions
seen so far, for the G KV heads. The empty cache has T = 0.

append_kv adds the new positions k, v (B, G, t, d_head) after the cached ones: the result
holds T + t positions, nothing more.

decode_step runs one causal attention layer on the next t tokens x (B, t, d_model), which sit
at positions T … T + t − 1 (t = the prompt's length on the first call, then 1 per generated
token):
- the weights are nn.Linear's layout, without biases: q = x @ W_q.T with W_q (H·d_head,
  d_model), W_k and W_v (G·d_head, d_model), W_o (d_model, H·d_head); H = n_heads,
  d_head = W_q.shape[0] // H, G = W_k.shape[0] // d_head;
- split heads as (B, t, H, d_head) → (B, H, t, d_head) (and G for k, v); append the new k, v
  to the cache (G heads, the input's dtype); query head h reads KV head h // (H / G);
- new token i sees every cached position and the new tokens 0..i (the causal mask with
  offset T, as causal_mask(t, T + t)); scores are divided by √d_head;
- return out (B, t, d_model) after W_o, and the grown cache.

Generating token by token must give exactly what one causal forward pass over all the tokens
gives. The cache then costs 2 (K and V) · G · d_head · bytes per element per token and layer:
`quizprep budget` counts the same.

Rules: F.scaled_dot_product_attention and nn.MultiheadAttention are off limits.

What the interviewer expects you to say:
- queries are not cached: a past query is never read again, past keys and values always are;
- GQA shrinks the cache by H / G, so cache G heads and expand only inside the attention;
- prefill is one parallel causal pass over the prompt; each decode step reads the whole cache
  for one new token, which makes decoding memory-bound.

Check your work:  quizprep grade kv_cache.py
"""
from __future__ import annotations

import torch


def append_kv(cache_k: torch.Tensor, cache_v: torch.Tensor, k: torch.Tensor,
              v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    raise NotImplementedError


def decode_step(x: torch.Tensor, cache_k: torch.Tensor, cache_v: torch.Tensor, W_q: torch.Tensor,
                W_k: torch.Tensor, W_v: torch.Tensor, W_o: torch.Tensor,
                n_heads: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    raise NotImplementedError
