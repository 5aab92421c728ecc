"""The documented tolerances: correct implementations stay below half of them, shortcuts far outside."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from quizprep.grader.exercises import attention, attention_backward
from quizprep.grader.problem import GeneratorError, matches, reject_shortcuts


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


def test_a_huge_prediction_is_matched_to_its_largest_magnitude_not_each_element():
    """P without the scale over a thousand keys gives gradients near 1e11 whose float32 sums cancel to
    values near 1 in some elements: their rounding is an ulp of the terms summed, not of the element,
    so the prediction matches within the tolerance times its largest magnitude; a prediction 1% off
    does not."""
    sizes = {"batch": 1, "heads": 2, "kv_heads": 2, "n": 5, "m": 5, "d": 4, "block": 0}
    case = attention_backward.build(sizes, {}, seed=3)
    unscaled = next(h for h in attention_backward.HYPOTHESES if h.id == "backward-p-unscaled")
    guess = torch.randn(case.expected["dq"].shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    guess[..., 0] *= 1e11  # cancelling sums elsewhere leave the other features near 1
    signs = torch.randint(0, 2, guess.shape, generator=torch.Generator().manual_seed(2)) * 2.0 - 1.0
    largest = float(guess.abs().max())
    rounded = guess + signs * 1e-6 * largest  # float32's few ulps of the largest term, on every element
    assert matches(case, {**case.expected, "dq": rounded}, unscaled, {"dq": guess})
    assert not matches(case, {**case.expected, "dq": guess + signs * 1e-2 * largest}, unscaled, {"dq": guess})
