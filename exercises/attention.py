"""Exercise: scaled dot-product attention.

    scaled_dot_product_attention(q, k, v, mask=None) -> (out, weights)

Shapes (any number of leading batch dimensions, including none):
    q        (..., n, d_k)   n queries
    k        (..., m, d_k)   m keys (m may differ from n: cross-attention, KV caches)
    v        (..., m, d_v)   one value per key (d_v may differ from d_k)
    mask     boolean, True = this query MAY attend to this key; broadcastable to (..., n, m)
    out      (..., n, d_v)
    weights  (..., n, m)     softmax(q kᵀ / √d_k) over the keys; each row sums to 1

Rules: write the maths yourself with basic torch operations (matmul, softmax, masked_fill, ...);
torch.nn.functional.scaled_dot_product_attention and nn.MultiheadAttention are off limits.
Return tensors of the input's dtype on the input's device, keep gradients flowing, and do not
modify the inputs. A row whose keys are all masked has no defined answer: any output is accepted
there. No dropout: this is attention at inference (F.dropout defaults to training=True).

What the interviewer expects you to say:
- why divide by √d_k: with unit-variance components, q·k has variance d_k; unscaled scores push
  the softmax into saturation where gradients vanish;
- masks are applied to the scores before the softmax (with -inf or a very negative number), so
  the remaining weights still sum to 1;
- the cost: the n×m score matrix is O(n·m) memory, which is what FlashAttention avoids.

Check your work:  quizprep grade attention.py
"""
from __future__ import annotations

import torch


def scaled_dot_product_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    raise NotImplementedError
