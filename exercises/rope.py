"""Exercise: rotary position embeddings (RoPE) for queries or keys.

    apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None) -> Tensor

x is (B, H, n, d): the queries or the keys of n tokens; positions (n,) int64 holds each token's
position in the sequence. They start at 0 for a prompt and at the cache's length T during a
decode step: a new token at position T must be rotated by T, not by 0.

Rotate the first r = rotary_dim features (r = d when None; r is even) in r/2 planes, pair i
(i = 0 … r/2 − 1) by the angle  position · θ_i  with  θ_i = base^(−2i/r):

    (a, b)  →  (a·cos − b·sin,  a·sin + b·cos)

- layout="half" (GPT-NeoX, Hugging Face Llama): pair i is features (i, i + r/2);
- layout="interleaved" (GPT-J, Meta's original Llama, RoFormer): pair i is (2i, 2i + 1);
- the features r … d − 1 pass through unchanged (GPT-NeoX's rotary_pct, GPT-J's rotary_dim).

Return the rotated x, same shape and dtype. Compute the angles and their cos/sin in float32 at
least, whatever x's dtype: position 30000 is not even representable in bfloat16 (its neighbours
are 29952 and 30080), so half-precision angles are wrong by radians at long contexts.

Why this matters in an interview:
- q·k then depends only on the positions' difference: (R(m)q)·(R(n)k) = q·R(n − m)k, which is
  why cached keys keep their rotation and a decode step rotates only the new token;
- the two layouts are the same rotation up to a permutation of features: loading a checkpoint
  trained in one into code written for the other raises no error, it just ruins the model;
- θ_i spans wavelengths from 2π to about 2π·base tokens: context extension (PI, NTK, YaRN)
  is about what happens to the slow pairs.

Check your work:  quizprep grade rope.py
"""
from __future__ import annotations

import torch


def apply_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0, layout: str = "half",
               rotary_dim: int | None = None) -> torch.Tensor:
    raise NotImplementedError
