"""Exercise: attention's backward pass, by hand (no autograd).

    attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None) -> (dq, dk, dv)

The forward pass was  S = scale · q kᵀ,  P = softmax(S) over the keys (masked keys excluded),
o = P v,  with scale = 1/√d when None (as F.scaled_dot_product_attention). You receive what a
FlashAttention forward pass saves: q (B, H, n, d), k and v (B, G, m, d), the output o (B, H, n, d),
the row log-sum-exp lse (B, H, n) = log Σ_j exp(S_ij) (float32 for half inputs) and the gradient
of the loss with respect to o, d_o (B, H, n, d). Return the gradients dq, dk, dv, shaped and typed
like q, k, v.

- causal=True: query i sees keys j ≤ i + (m − n) (queries are the last n of m positions, as
  masking.causal_mask(n, m)); a masked key gets no gradient from that query.
- G ≤ H KV heads (grouped-query attention): query head h reads KV head h // (H / G), so dk and
  dv of a KV head sum the contributions of every query head of its group.
- block_size=None: work on whole matrices. block_size=b: FlashAttention-2's tiled backward:
  never hold all n × m scores; visit the keys (and, if you like, the queries) b at a time,
  recomputing P from q, k and lse, and accumulate dq, dk, dv.

The recurrence (per head):  P = exp(S − lse),  dV = Pᵀ dO,  dP = dO vᵀ,  D = rowsum(dO ∘ o),
dS = P ∘ (dP − D),  dQ = scale · dS k,  dK = scale · dSᵀ q.

Rules: F.scaled_dot_product_attention is off limits (the grader detects it); torch.autograd
would pass the checks and teach you nothing.

Why this matters in an interview:
- the softmax Jacobian is diag(p) − p pᵀ; its p pᵀ term needs D_i = Σ_j P_ij dP_ij, which is
  Σ_j P_ij (dO_i · v_j) = dO_i · o_i: O(d) per row from what the forward saved, not O(m);
- storing lse (n numbers) instead of P (n·m) is what lets FlashAttention recompute P in tiles;
  the backward costs about 2.5× the forward's FLOPs (5 matmuls against 2);
- forgetting the group sum for GQA, or the scale in one of dQ and dK, gives gradients that look
  plausible and train a slightly wrong model: compare with autograd once, in float64.

Check your work:  quizprep grade attention_backward.py
"""
from __future__ import annotations

import torch


def attention_backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, lse: torch.Tensor,
                       d_o: torch.Tensor, causal: bool = False, scale: float | None = None,
                       block_size: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    raise NotImplementedError
