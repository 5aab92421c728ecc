"""Exercise (Triton track): the FlashAttention forward kernel, written with @triton.jit.

    flash_attention(q, k, v, causal=False) -> (out, lse)

q, k, v: (B, H, n, d) tensors, d = 64 or 128, n any length (not a multiple of your tile).
out: (B, H, n, d), softmax(q kᵀ / √d) v in q's dtype. With causal=True query i sees keys 0..i.
lse: (B, H, n) float32, the log-sum-exp of each row of scaled scores, log Σ_j exp(q·k_j / √d).
Return it too: the backward pass recomputes P = exp(S − lse) tile by tile from it instead of
storing the n × n probabilities, so a forward kernel that drops it cannot be trained through.

Write a kernel that runs one program per (query tile, batch·head): load a BLOCK_M × d tile of Q,
walk over the keys in BLOCK_N tiles, keep per row the running max m, the running sum ℓ and an
unnormalised accumulator, rescale ℓ and the accumulator by exp(m_old − m_new) whenever the max
grows, and divide by ℓ once at the end. Then a launcher that allocates out and lse, computes the
grid and passes every stride (inputs may be strided views).

Things the grader names when they go wrong, each on its own line of a kernel:
- the ragged edge: load K and V with a mask; scores of columns ≥ n must be -inf and V's rows 0;
- causal: stop the key loop after the diagonal tile, and mask that tile element by element;
- accumulate tl.dot in float32 (its default), even when P is cast to fp16 for the dot; float32
  inputs are checked at float32 precision, and on a GPU tl.dot rounds them to TF32 unless you
  pass input_precision="ieee" (fp16/bf16 inputs need nothing);
- tl.exp2 with scores scaled by log2(e) is fine, but lse is stored in natural-log units.

Without a GPU the grader runs your kernel through Triton's interpreter (TRITON_INTERPRET=1) on
small shapes; on a GPU it is compiled and `quizprep grade --perf` times it against SDPA. The output
must come from your kernel's launches. tl.make_block_ptr (older tutorials) raises NotImplementedError
in Triton 3.9: use pointer arithmetic or tl.make_tensor_descriptor.
Triton is optional: pip install 'quizprep[triton]'. F.scaled_dot_product_attention and every
softmax are off limits.

What the interviewer expects you to say:
- tile sizes are bounded by one SM's shared memory (Q, K and V tiles of BLOCK × d elements);
- the result is exact, memory is O(n) per row block, and HBM traffic is what it saves;
- causal skipping computes T(T + 1)/2 of the T² tiles: about half the work;
- exp2 is the hardware instruction: exp(x) = exp2(x · log2 e), folded into the scale.

Check your work:  quizprep grade flash_triton.py
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _attention_forward(Q, K, V, Out, Lse):
    pass  # your kernel: add the strides, sizes and tl.constexpr tile sizes it needs


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                    causal: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    raise NotImplementedError
