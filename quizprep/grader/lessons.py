"""The quiz questions that teach each point a failed check can lead back to.

Every hint the grader gives names one of these ids; the test suite checks that each id exists
in the question banks, so a renamed question cannot leave a dangling pointer.
"""
from __future__ import annotations

LESSONS: dict[str, str] = {
    "scaling-why-sqrt-dk": "why scores are divided by √d_k (and not d_k, √d_model or √d_v)",
    "softmax-max-shift": "why softmax subtracts the row maximum before exponentiating",
    "softmax-axis": "which axis the attention softmax normalises over",
    "masking-causal-diagonal": "a causal mask keeps the diagonal: a token attends to itself",
    "masking-kv-cache-offset": "causal masks when queries are the last n of m cached positions",
    "masking-padding-keys": "padding masks hide keys (columns), not queries",
    "masking-before-softmax": "masks are applied to the scores before the softmax, with -inf",
    "multihead-split-transpose": "splitting heads: reshape to (B, T, H, d) then transpose",
    "multihead-output-projection": "the output projection W_o after merging heads",
    "gqa-head-mapping": "query head h reads KV head h // (H / G): repeat_interleave, not repeat",
    "numerics-fp32-softmax": "why attention softmaxes run in float32 even in bf16/fp16 models",
    "masking-additive-constants": "large negative fills: -1e9 overflows float16, finfo(dtype).min does not",
    "sdpa-f-dropout-training": "F.dropout is on unless training=False; nn.Dropout follows .eval()",
    "sdpa-is-causal-vs-attn-mask": "what SDPA's is_causal and attn_mask do, and why a module is not a shortcut",
    "flash-online-softmax-bug": "when the running maximum grows, the old sum is rescaled by exp(m_old − m_new)",
    "flash-online-output": "the output accumulator is rescaled too, and divided by ℓ once at the end",
    "flash-causal-tiles": "causal tiles: future tiles are skipped, diagonal tiles masked element by element",
    "flash-tiling-memory": "FlashAttention keeps O(n) row statistics, never the n × m scores",
    "softmax-online-rescale": "the running sum's rescale factor is exp(m_old − m_new), below 1",
    "serving-merge-partials": "two partial softmax states merge weighted by their share of the mass",
    "kv-cache-prefill-vs-decode": "prefill attends causally within the prompt; decode appends one position",
    "kv-cache-gpt2-per-token": "each token adds K and V for every layer and KV head to the cache",
    "kv-cache-why-not-q": "the cache holds every past key and value; past queries are never read again",
    "gqa-kv-cache-savings": "GQA caches G KV heads, not H: the cache shrinks by H/G",
    "masking-sliding-window-count": "a causal window of W keys includes the query itself and W − 1 before it",
    "kv-cache-free-sliding-window": "sliding windows: W keys per layer, about k·W after k layers",
    "triton-ragged-edges": "masked loads at a ragged edge: scores of missing keys must be -inf, values 0",
    "triton-strides": "pointer arithmetic with every stride: a transposed or strided tensor is not contiguous",
    "triton-fp32-accumulate": "tl.dot keeps its inputs in fp16/bf16 but accumulates in float32",
    "triton-lse-backward": "the forward pass stores the row log-sum-exp m + log ℓ for the backward pass",
    "triton-exp2": "kernels use exp2 with scores pre-scaled by log2(e): the same softmax, a cheaper instruction",
    "triton-tile-sram": "tile sizes are bounded by one SM's shared memory: Q, K, V tiles of BLOCK × d elements",
    "position-rope-layout-code": "RoPE's two layouts pair (i, i + d/2) or (2i, 2i + 1): the same rotation, permuted",
    "position-rope-wavelength": "RoPE's frequencies θ_i = base^(−2i/d): wavelengths from 2π to about 2π·base",
    "position-rope-kv-cache": "cached keys keep their rotation; a decode step rotates the new token at its position",
    "position-rope-relative-code": "rotated q·k depends only on the positions' difference",
    "rope-rotation-formula": "a pair (a, b) turns to (a·cos − b·sin, a·sin + b·cos): rotate_half is cat(−x2, x1)",
    "rope-angle-precision": "RoPE angles in bfloat16 are wrong by radians at long positions: compute them in float32",
    "backward-softmax-delta": "the softmax backward: dS = P ∘ (dP − D) with D = rowsum(dO ∘ O)",
    "backward-recompute-p": "the backward recomputes P = exp(scale · q kᵀ − lse); the scale reaches dQ and dK",
    "backward-matmul-shapes": "the backward's matmuls by shape: dV = Pᵀ dO, dQ = dS K, dK = dSᵀ Q",
    "paged-address": "a paged cache: token t is at block_table[b, t // page_size], slot t % page_size",
    "paged-last-page": "a sequence's last page is partly filled: attend to exactly seq_len tokens",
    "rope-partial-rotary": "a partial rotary_dim rotates the first r features of each head and passes the rest",
}


def lesson(quiz_id: str) -> str:
    """The id itself, after checking it is in the table (a typo fails loudly at import)."""
    if quiz_id not in LESSONS:
        raise KeyError(f"unknown quiz id {quiz_id!r}")
    return quiz_id
