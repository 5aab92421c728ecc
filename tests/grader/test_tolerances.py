"""The documented tolerances: correct implementations stay below half of them, shortcuts far outside."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from quizprep.grader.exercises import attention
from quizprep.grader.problem import GeneratorError, reject_shortcuts


def naive(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def upcast(q, k, v, mask):
    """Half inputs computed in float32 (wider inputs are already at least that precise)."""
    work = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    return naive(q.to(work), k.to(work), v.to(work), mask).to(q.dtype)


def additive(q, k, v, mask):
    scores = torch.einsum("...nd,...md->...nm", q, k) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = scores + (~mask).to(scores.dtype) * torch.finfo(scores.dtype).min / 2
    return scores.softmax(-1) @ v


def sdpa(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


CASES = [(dtype, logits, mask) for dtype in (torch.float64, torch.float32, torch.bfloat16, torch.float16)
         for logits in ("mild", "peaky") for mask in (None, "random", "causal")]
CASES += [(torch.float32, "huge", None), (torch.float64, "huge", "causal")]


@pytest.mark.parametrize("dtype, logits, mask", CASES)
@pytest.mark.parametrize("implementation", [naive, upcast, additive, sdpa], ids=lambda f: f.__name__)
def test_correct_styles_stay_within_half_the_tolerance(dtype, logits, mask, implementation):
    for seed in range(3):
        case = attention.build(attention.case_sizes((2, 3), 6, 9, 16, 8), {"dtype": dtype, "logits": logits,
                                                                        "mask": mask}, seed)
        data = case.data
        out = implementation(data["q"], data["k"], data["v"], data["mask"]).double()
        error = (out - case.expected["out"]).abs().max().item()
        assert error <= case.tolerance["out"].atol / 2, (seed, error, case.tolerance["out"].atol)


def test_generator_refuses_inputs_a_shortcut_would_pass():
    case = attention.build(attention.case_sizes((2,), 4, 6, 8, 4), {"dtype": torch.float32}, 0)
    with pytest.raises(GeneratorError):
        reject_shortcuts(case, "out", {"the answer itself": case.expected["out"].clone()})
    zeros = torch.zeros_like(case.expected["out"])
    assert (zeros - case.expected["out"]).abs().max() > 10 * case.tolerance["out"].atol
