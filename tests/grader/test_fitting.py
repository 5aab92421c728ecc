"""Issue 20: names from the numbers. A transformation of the expected outputs names the learner's
when it reproduces every differing output, and a name the data contradicts is never given."""
from __future__ import annotations

import torch

from quizprep.grader import reference
from quizprep.grader.compare import Tolerance
from quizprep.grader.fitting import fit
from quizprep.grader.invariants import explain
from quizprep.grader.problem import Case


def attention_case(mask: torch.Tensor | None = None) -> Case:
    generator = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=generator, dtype=torch.float64) for _ in range(3))
    out, weights = reference.attention(q, k, v, mask)
    tolerance = Tolerance.working(torch.float32, 4.0)
    return Case("attention", {}, {}, {"q": q, "k": k, "v": v, "mask": mask}, {"out": out, "weights": weights},
                {"out": tolerance, "weights": tolerance},
                {"out": ("batch", "head", "query", "feature"), "weights": ("batch", "head", "query", "key")})


def test_head_averaged_weights_are_named_and_explain_does_not_index_them():
    case = attention_case()
    actual = {"out": case.expected["out"].float(), "weights": case.expected["weights"].mean(dim=1).float()}
    assert fit(case, actual).id == "weights-head-averaged"
    assert explain(None, None, case, actual, None) is None  # was an IndexError: "internal grader error"


def test_summed_heads_are_not_called_averaged():
    case = attention_case()
    actual = {"out": case.expected["out"], "weights": case.expected["weights"].sum(dim=1)}
    assert fit(case, actual) is None


def test_logits_returned_as_weights_masked_or_not():
    mask = reference.causal_mask(5)
    case = attention_case(mask)
    q, k = case.data["q"], case.data["k"]
    logits = q @ k.transpose(-2, -1) / 2.0
    for returned in (logits.masked_fill(~mask, float("-inf")), logits):
        actual = {"out": case.expected["out"], "weights": returned}
        assert fit(case, actual).id == "weights-are-logits"


def test_no_fit_when_another_output_is_wrong_too():
    case = attention_case()
    logits = case.data["q"] @ case.data["k"].transpose(-2, -1) / 2.0
    actual = {"out": case.expected["out"] + 1.0, "weights": logits}
    assert fit(case, actual) is None


def test_a_kept_dimension_with_the_right_values():
    state = torch.tensor([1.0, 2.0, -3.0], dtype=torch.float64)
    case = Case("state", {}, {}, {}, {"max": state}, {"max": Tolerance(1e-9)}, {"max": ("row",)})
    assert fit(case, {"max": state.unsqueeze(-1)}).id == "kept-dim"
    assert fit(case, {"max": state.unsqueeze(-1) + 1}) is None  # the shape alone is no reason to say "values right"


def test_some_rows_wrong_only_when_every_output_agrees():
    case = attention_case(reference.causal_mask(5))
    weights = case.expected["weights"].clone()
    weights[..., 1:, :] = weights[..., 1:, :].flip(-1)  # query 0 sees one key: its weights cannot be wrong
    everywhere = {"out": case.expected["out"] + 1.0, "weights": weights}
    found = explain(_NoRun(), _NoRun(), case, everywhere, None)
    assert found is None or found.id != "some-rows-wrong", found
    some = {"out": case.expected["out"].clone(), "weights": case.expected["weights"].clone()}
    some["out"][..., 2, :] += 1.0
    found = explain(_NoRun(), _NoRun(), case, some, None)
    assert found is not None and found.id == "some-rows-wrong" and "queries 2 of 0–4" in found.title


def test_a_row_with_no_defined_answer_is_not_a_right_row():
    mask = torch.ones(5, 5, dtype=torch.bool)
    mask[2] = False  # query 2 sees no key: its answer is undefined, whatever the code returns
    case = attention_case(mask)
    wrong = {"out": case.expected["out"] + 1.0, "weights": case.expected["weights"].clone()}  # every defined row
    found = explain(_NoRun(), _NoRun(), case, wrong, None)
    assert found is None or found.id != "some-rows-wrong", found


def test_nan_where_the_answer_is_finite_is_named_before_any_other_property():
    case = attention_case(reference.causal_mask(5))
    nan = {name: torch.full_like(expected, float("nan")) for name, expected in case.expected.items()}
    found = explain(_NoRun(), _NoRun(), case, nan, None)
    assert found is not None and found.id == "nan-outputs" and "0·-inf" in found.hint
    undefined_only = attention_case(torch.zeros(5, 5, dtype=torch.bool))  # every row undefined: NaN is fine there
    assert explain(_NoRun(), _NoRun(), undefined_only, {n: e.clone() for n, e in undefined_only.expected.items()},
                   None) is None


class _NoRun:
    """A context and problem for explain(): a second run would need a learner, and is not asked for."""

    def reseeded(self, salt: int) -> _NoRun:
        return self

    def run(self, ctx, case, options=None):
        raise RuntimeError("no learner here")


def test_the_last_queries_left_out_are_named_and_a_wrong_first_row_is_not():
    case = attention_case(torch.tensor([True, True, True, False, True]).reshape(1, 1, 1, 5))
    out, weights = case.expected["out"], case.expected["weights"]
    found = fit(case, {"out": out[..., :4, :].float(), "weights": weights[..., :4, :].float()})
    assert found.id == "query-rows-dropped" and "4 query rows for 5 queries" in found.title
    assert fit(case, {"out": out[..., 1:, :].float(), "weights": weights[..., 1:, :].float()}) is None
