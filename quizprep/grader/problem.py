"""Comparing a learner's outputs with the reference: cases, shrinking and diagnosis.

An exercise describes itself as a :class:`Problem`: how to build a :class:`Case` (inputs,
float64 expected outputs, tolerances) from a dict of sizes and a variant, how to ask the
learner for the same outputs, how to shrink sizes, and which classic mistakes
(:class:`Hypothesis`) to test when the outputs differ. :func:`verify` does the rest.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import torch
from torch import Tensor

from quizprep.grader.compare import Mismatch, Tolerance, close_elements, find_mismatch
from quizprep.grader.context import CheckContext, Reply
from quizprep.grader.spec import CheckFailure

MAX_SHRINK_STEPS = 12


class GeneratorError(AssertionError):
    """The check generator produced inputs that a shortcut could pass."""


@dataclass
class Case:
    label: str
    sizes: dict[str, int]
    variant: dict[str, Any]
    data: dict[str, Any]
    expected: dict[str, Tensor]
    tolerance: dict[str, Tolerance]
    dims: dict[str, tuple[str, ...]] = field(default_factory=dict)
    regions: dict[str, dict[str, Tensor]] = field(default_factory=dict)


@dataclass(frozen=True)
class Hypothesis:
    """A classic mistake, computed in the grader (float64 unless the mistake is about precision)."""

    id: str
    title: str
    hint: str
    quiz: str
    predict: Callable[[Case], dict[str, Tensor] | None]


class Problem(Protocol):
    hypotheses: tuple[Hypothesis, ...]

    def build(self, sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case: ...

    def run(self, ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]: ...

    def shrink(self, sizes: dict[str, int]) -> list[dict[str, int]]: ...


def mismatches(case: Case, actual: dict[str, Tensor]) -> list[Mismatch]:
    found = []
    for name, expected in case.expected.items():
        mismatch = find_mismatch(name, actual[name], expected, case.tolerance[name],
                                 case.dims.get(name, ()), case.regions.get(name))
        if mismatch is not None:
            found.append(mismatch)
    return found


def matches(case: Case, actual: dict[str, Tensor], predicted: dict[str, Tensor], slack: float = 2.0) -> bool:
    """Does `actual` agree with a hypothesis' prediction wherever the reference is defined?
    Non-finite values must line up: a mistake that overflows predicts where the NaNs appear."""
    for name, guess in predicted.items():
        got, reference = actual.get(name), case.expected[name]
        if got is None or tuple(got.shape) != tuple(guess.shape):
            return False
        if reference.shape == guess.shape:
            defined = ~torch.isnan(reference)
            got, guess = got[defined], guess[defined]
        got, guess = got.double(), guess.double()
        both_nonfinite = ~torch.isfinite(got) & ~torch.isfinite(guess)
        near = (got - guess).abs() <= case.tolerance[name].atol * slack
        if not bool((both_nonfinite | near).all()):
            return False
    return True


def differs_from_reference(case: Case, predicted: dict[str, Tensor]) -> bool:
    return any(
        guess.shape != case.expected[name].shape
        or not bool(close_elements(guess.nan_to_num(1e30), case.expected[name], case.tolerance[name]).all())
        for name, guess in predicted.items()
    )


def diagnose(problem: Problem, case: Case, actual: dict[str, Tensor]) -> Hypothesis | None:
    for hypothesis in problem.hypotheses:
        predicted = hypothesis.predict(case)
        if predicted and differs_from_reference(case, predicted) and matches(case, actual, predicted):
            return hypothesis
    return None


def smallest_failing(ctx: CheckContext, problem: Problem, case: Case, seed: int,
                     options: dict[str, Any] | None) -> tuple[Case, dict[str, Tensor]] | None:
    """Greedily shrink the sizes while the learner's output still differs."""
    best: tuple[Case, dict[str, Tensor]] | None = None
    sizes, steps = dict(case.sizes), 0
    improved = True
    while improved and steps < MAX_SHRINK_STEPS:
        improved = False
        for candidate in problem.shrink(sizes):
            steps += 1
            try:
                small = problem.build(candidate, case.variant, seed)
                actual = problem.run(ctx, small, options)
            except (GeneratorError, CheckFailure):
                continue
            except Exception:  # the learner crashed on a smaller size: not a cleaner example
                continue
            if mismatches(small, actual):
                best, sizes, improved = (small, actual), candidate, True
                break
            if steps >= MAX_SHRINK_STEPS:
                break
    return best


def verify(ctx: CheckContext, problem: Problem, sizes: dict[str, int], variant: dict[str, Any],
           seed: int = 0, options: dict[str, Any] | None = None) -> tuple[Case, dict[str, Tensor]]:
    """Run one case; on a mismatch raise CheckFailure with localisation, smallest case and diagnosis."""
    case = problem.build(sizes, variant, seed)
    actual = problem.run(ctx, case, options)
    found = mismatches(case, actual)
    if not found:
        return case, actual
    raise failure_for(ctx, problem, case, actual, found, seed, options)


def failure_for(ctx: CheckContext, problem: Problem, case: Case, actual: dict[str, Tensor],
                found: list[Mismatch], seed: int, options: dict[str, Any] | None,
                message: str = "") -> CheckFailure:
    hypothesis = diagnose(problem, case, actual)
    shrunk = smallest_failing(ctx, problem, case, seed, options)
    if hypothesis is None and shrunk is not None:
        hypothesis = diagnose(problem, *shrunk)
    smallest = describe_small(*shrunk) if shrunk is not None else f"no smaller case fails than: {case.label}"
    if hypothesis is not None:
        diagnosis, diagnosis_id = hypothesis.title, hypothesis.id
        hint, quiz = hypothesis.hint, hypothesis.quiz
    else:
        diagnosis, diagnosis_id = "no known mistake matches these outputs; see the smallest failing case", ""
        hint, quiz = "", ""
    return CheckFailure(
        message=message or found[0].summary.split(";")[0],
        tried=case.label,
        smallest=smallest,
        where="\n".join(m.describe() for m in found),
        diagnosis=diagnosis,
        hint=hint,
        quiz=quiz,
        diagnosis_id=diagnosis_id,
    )


def describe_small(case: Case, actual: dict[str, Tensor]) -> str:
    lines = [case.label]
    for name, expected in case.expected.items():
        got = actual[name]
        if expected.numel() <= 24 and got.numel() <= 24:
            lines.append(f"  {name} expected: {_fmt(expected)}")
            lines.append(f"  {name} got:      {_fmt(got)}")
    return "\n".join(lines)


def _fmt(tensor: Tensor) -> str:
    if tensor.dtype == torch.bool:
        return str(tensor.int().tolist())
    values = tensor.double().reshape(-1).tolist()
    body = ", ".join("nan" if v != v else f"{v:.4g}" for v in values)
    return f"shape {tuple(tensor.shape)} [{body}]"


def reject_shortcuts(case: Case, output: str, shortcuts: dict[str, Tensor]) -> None:
    """Raise GeneratorError if any shortcut output would pass as `output` for this case."""
    expected, tolerance = case.expected[output], case.tolerance[output]
    for name, guess in shortcuts.items():
        if guess.shape == expected.shape and bool(close_elements(guess, expected, tolerance.scaled(4.0)).all()):
            raise GeneratorError(f"{name} would pass: {case.label}")


def expect_unchanged(reply: Reply, args: tuple[tuple[str, Tensor], ...], tried: str, hint: str,
                     kwargs: tuple[tuple[str, Tensor], ...] = ()) -> None:
    """Fail naming the first input the call changed in place. `args` names the leading positional
    arguments in order; `kwargs` names keyword ones. The call needs options={"return_inputs": True}."""
    args_after = reply.inputs_after.get("args", [])
    kwargs_after = reply.inputs_after.get("kwargs", {})
    pairs = [(name, before, args_after[i] if i < len(args_after) else None) for i, (name, before) in enumerate(args)]
    pairs += [(name, before, kwargs_after.get(name)) for name, before in kwargs]
    for name, before, now in pairs:
        if now is None or not torch.equal(before, now):
            raise CheckFailure(f"`{name}` was modified in place", tried=tried, hint=hint)


def first_output_checks(actual: Any, names: tuple[str, ...], what: str) -> dict[str, Tensor]:
    """Turn the learner's return value into named tensors, or fail with a plain reason."""
    from quizprep.grader.protocol import Opaque

    if len(names) == 1:
        values = (actual,)
        if isinstance(actual, tuple) and len(actual) >= 1:
            raise CheckFailure(f"{what} returned a tuple of {len(actual)}; it should return one tensor",
                               hint="Return the tensor itself, not a tuple.")
    else:
        if not isinstance(actual, (tuple, list)) or len(actual) != len(names):
            raise CheckFailure(f"{what} returned {_kind(actual)}; the contract is a tuple ({', '.join(names)})",
                               hint=f"End with `return {', '.join(names)}`.")
        values = tuple(actual)
    result = {}
    for name, value in zip(names, values):
        if isinstance(value, Opaque) or not isinstance(value, Tensor):
            raise CheckFailure(f"{what} returned {_kind(value)} as `{name}`; expected a torch.Tensor",
                               hint="Keep everything in torch: no numpy, lists or Python numbers.")
        result[name] = value
    return result


def _kind(value: Any) -> str:
    from quizprep.grader.protocol import Opaque

    if isinstance(value, Opaque):
        return f"a {value.description}"
    if isinstance(value, Tensor):
        return f"a single Tensor of shape {tuple(value.shape)}"
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    return "None" if value is None else f"a {type(value).__name__}"
