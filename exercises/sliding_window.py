"""Exercise: sliding-window causal attention (Longformer's causal half; Mistral-7B-v0.1).

    sliding_window_mask(n, window, m=None) -> bool tensor (n, m)
    sliding_window_attention(q, k, v, window) -> out

Which keys a window of W includes — exactly: query i sits at position p = i + (m − n) (with
m > n the queries are the LAST n of m positions, as in causal_mask) and may attend to key j
when

    p − W < j ≤ p

that is, to itself and the W − 1 positions before it: W keys once p ≥ W − 1, fewer near the
start. W = 1 means each token sees only itself; W ≥ m is the plain causal mask. m defaults
to n. True means "may attend".

sliding_window_attention: q (B, H, n, d), k (B, H, m, d), v (B, H, m, d_v) -> (B, H, n, d_v)
in q's dtype, softmax(q kᵀ / √d) v with keys outside the window hidden.

Rules: F.scaled_dot_product_attention and nn.MultiheadAttention are off limits.

What the interviewer expects you to say:
- each layer looks back W − 1 positions, but stacking k layers lets information travel about
  k·(W − 1) positions (the receptive field grows with depth);
- the KV cache becomes a rolling buffer of W positions, so its memory stops growing;
- the count of attended pairs grows like n·W, not n²/2.
Related questions: masking-sliding-window-count,
kv-cache-rolling-slot, kv-cache-free-sliding-window (the receptive field).

Check your work:  quizprep grade sliding_window.py
"""
from __future__ import annotations

import torch


def sliding_window_mask(n: int, window: int, m: int | None = None) -> torch.Tensor:
    raise NotImplementedError


def sliding_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    raise NotImplementedError
