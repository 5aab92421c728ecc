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
}


def lesson(quiz_id: str) -> str:
    """The id itself, after checking it is in the table (a typo fails loudly at import)."""
    if quiz_id not in LESSONS:
        raise KeyError(f"unknown quiz id {quiz_id!r}")
    return quiz_id
