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

from quizprep.grader.compare import (
    Mismatch,
    Tolerance,
    close_elements,
    find_mismatch,
    precision_explaining,
)
from quizprep.grader.context import CheckContext, Reply
from quizprep.grader.crashes import in_place_write
from quizprep.grader.lessons import lesson
from quizprep.grader.op_lines import learner_line
from quizprep.grader.small_case import describe_small
from quizprep.grader.spec import CheckFailure, Diagnosis
from quizprep.grader.value_lines import ValueTell

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


Prediction = dict[str, Tensor] | list[dict[str, Tensor]] | None


@dataclass(frozen=True)
class Hypothesis(Diagnosis):
    """A classic mistake, computed in the grader (float64 unless the mistake is about precision).

    Rows a mistake leaves with no visible key are NaN in its prediction and are not compared:
    code that fills with -1e9 or finfo.min returns a uniform average there instead. Set
    `nonfinite_must_match` when the NaNs are the mistake itself (overflow)."""

    predict: Callable[[Case], Prediction]
    nonfinite_must_match: bool = False
    tell: ValueTell | None = None  # where its values show in the learner's lines (value_lines.py)

    def forms(self, case: Case) -> list[dict[str, Tensor]]:
        """The outputs this mistake gives, in each form code takes (e.g. a split made without its
        transpose, merged back with or without one)."""
        predicted = self.predict(case)
        if not predicted:
            return []
        return predicted if isinstance(predicted, list) else [predicted]

    def explains(self, case: Case, actual: dict[str, Tensor]) -> bool:
        return any(differs_from_reference(case, self, form) and matches(case, actual, self, form)
                   for form in self.forms(case))


def either(*predictors: Callable[[Case], dict[str, Tensor] | None]) -> Callable[[Case], Prediction]:
    """One mistake with several forms: every form that applies to the case."""
    def predict(case: Case) -> list[dict[str, Tensor]] | None:
        return [form for form in (p(case) for p in predictors) if form] or None

    return predict


class Problem(Protocol):
    """What verify needs of an exercise: a frozen dataclass of functions or a class with methods."""

    @property
    def hypotheses(self) -> tuple[Hypothesis, ...]: ...

    def build(self, sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case: ...

    def run(self, ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]: ...

    def shrink(self, sizes: dict[str, int]) -> list[dict[str, int]]: ...

    def alternatives(self, sizes: dict[str, int]) -> list[dict[str, int]]: ...  # sizes that tell mistakes apart


def no_alternatives(sizes: dict[str, int]) -> list[dict[str, int]]:
    return []


@dataclass(frozen=True)
class FunctionProblem:
    """A Problem made of an exercise module's own functions."""

    hypotheses: tuple[Hypothesis, ...]
    build: Callable[[dict[str, int], dict[str, Any], int], Case]
    run: Callable[..., dict[str, Tensor]]
    shrink: Callable[[dict[str, int]], list[dict[str, int]]]
    alternatives: Callable[[dict[str, int]], list[dict[str, int]]] = no_alternatives


def mismatches(case: Case, actual: dict[str, Tensor]) -> list[Mismatch]:
    found = []
    for name, expected in case.expected.items():
        mismatch = find_mismatch(name, actual[name], expected, case.tolerance[name],
                                 case.dims.get(name, ()), case.regions.get(name))
        if mismatch is not None:
            found.append(mismatch)
    return found


def _compared(case: Case, name: str, guess: Tensor, hypothesis: Hypothesis) -> Tensor:
    """Where a prediction is compared: the reference is defined and, unless NaNs are the
    mistake, so is the prediction."""
    reference = case.expected[name]
    where = ~torch.isnan(reference) if reference.shape == guess.shape else torch.ones_like(guess, dtype=torch.bool)
    if not hypothesis.nonfinite_must_match:
        where = where & ~torch.isnan(guess)
    return where


def matches(case: Case, actual: dict[str, Tensor], hypothesis: Hypothesis, predicted: dict[str, Tensor],
            slack: float = 2.0) -> bool:
    """Does `actual` agree with a hypothesis' prediction wherever both are defined? When the NaNs
    are the mistake (overflow), non-finite values must line up. The tolerance is the output's,
    scaled up where a wrong prediction is larger than the outputs it was made for: rounding grows
    with the values, and an element's with the largest terms summed into it, not with the element
    (another device's exp differs by an ulp of each, not of 1; a float32 sum of ±1e11 terms that
    cancel to 1 is off by 1e4), so by the prediction's largest magnitude."""
    for name, guess in predicted.items():
        got = actual.get(name)
        if got is None or tuple(got.shape) != tuple(guess.shape):
            return False
        where = _compared(case, name, guess, hypothesis)
        got, guess = got[where].double(), guess[where].double()
        both_nonfinite = ~torch.isfinite(got) & ~torch.isfinite(guess)
        expected = case.expected[name].double().abs().nan_to_num(0.0, 0.0, 0.0)  # may differ in shape
        outputs = max(1.0, float(expected.max())) if expected.numel() else 1.0
        largest = float(guess.detach().abs().nan_to_num(0.0, 0.0, 0.0).max()) if guess.numel() else 0.0
        near = (got - guess).abs() <= case.tolerance[name].atol * slack * max(1.0, largest / outputs)
        if not bool((both_nonfinite | near).all()):
            return False
    return True


def differs_from_reference(case: Case, hypothesis: Hypothesis, predicted: dict[str, Tensor]) -> bool:
    for name, guess in predicted.items():
        expected = case.expected[name]
        if guess.shape != expected.shape:
            return True
        where = _compared(case, name, guess, hypothesis)
        if hypothesis.nonfinite_must_match and bool((where & ~torch.isfinite(guess)).any()):
            return True
        if not bool(close_elements(guess[where], expected[where], case.tolerance[name]).all()):
            return True
    return False


def candidates(problem: Problem, case: Case, actual: dict[str, Tensor]) -> list[Hypothesis]:
    """Every hypothesis that predicts something other than the reference and agrees with `actual`."""
    return [hypothesis for hypothesis in problem.hypotheses if hypothesis.explains(case, actual)]


def diagnose(problem: Problem, case: Case, actual: dict[str, Tensor], ctx: CheckContext | None = None,
             seed: int = 0, options: dict[str, Any] | None = None) -> Hypothesis | None:
    """The one hypothesis that explains `actual`. When several do (the case cannot tell them
    apart), the learner is run on other sizes until one survives; never two names."""
    found = candidates(problem, case, actual)
    if len(found) > 1 and ctx is not None:
        found = _separate(ctx, problem, case, found, seed, options)
    return found[0] if found else None


def _separate(ctx: CheckContext, problem: Problem, case: Case, found: list[Hypothesis], seed: int,
              options: dict[str, Any] | None) -> list[Hypothesis]:
    for sizes in problem.alternatives(case.sizes):
        try:
            other = problem.build(sizes, case.variant, seed + 104729)
            actual = problem.run(ctx, other, options)
        except Exception:  # noqa: BLE001 - a case the learner cannot run tells nothing apart
            continue
        surviving = [h for h in found if h.explains(other, actual)]
        if surviving:
            found = surviving
        if len(found) == 1:
            break
    return found


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
    diagnosis: Diagnosis | None = diagnose(problem, case, actual, ctx, seed, options)
    shrunk = smallest_failing(ctx, problem, case, seed, options)
    if diagnosis is None and shrunk is not None:
        diagnosis = diagnose(problem, *shrunk, ctx, seed, options)
    if diagnosis is None:
        from quizprep.grader.fitting import fit
        from quizprep.grader.invariants import explain

        diagnosis = fit(case, actual) or explain(ctx, problem, case, actual, options)
    smallest = describe_small(*shrunk) if shrunk is not None else f"no smaller case fails than: {case.label}"
    where = (learner_line(ctx, problem, shrunk[0] if shrunk else case, diagnosis.id, options, failing=case,
                          seed=seed) if diagnosis else "")
    return CheckFailure(
        message=message or found[0].headline,
        tried=case.label,
        smallest=smallest,
        mismatches=list(found),
        named=diagnosis,
        where=where,
        diagnosis="" if diagnosis else "no known mistake matches these outputs; see the smallest failing case",
    )


def expect_forward(ctx: CheckContext, problem: Problem, case: Case, actual: dict[str, Tensor]) -> None:
    """Before judging gradients: a wrong forward pass is the cause, and is named as such."""
    found = mismatches(case, actual)
    if found:
        raise failure_for(ctx, problem, case, actual, found, ctx.seed, None,
                          message="the forward pass already differs, so its gradients do too")


def expect_gradient(name: str, got: Tensor | None, want: Tensor, logit_scale: float, tried: str,
                    dims: tuple[str, ...] = ()) -> None:
    """Compare one gradient in float64 inputs at the working precision (a float32 softmax is fine)."""
    if got is None:
        raise CheckFailure(f"no gradient reaches `{name}`", tried=tried,
                           hint="Something detaches the computation from it: .detach(), .data, torch.no_grad(), "
                                "or a round trip through numpy or Python numbers.")
    tolerance = Tolerance.working(torch.float64, logit_scale, float(want.abs().max()), factor=4)
    mismatch = find_mismatch(f"d(out)/d({name})", got, want, tolerance, dims)
    if mismatch is None:
        return
    coarse = precision_explaining(got, want, tolerance)
    raise CheckFailure(
        f"the gradient with respect to `{name}` differs from the reference", tried=tried, mismatches=[mismatch],
        diagnosis=f"the gradient carries {str(coarse).removeprefix('torch.')}-sized errors" if coarse else "",
        diagnosis_id="low-precision" if coarse else "",
        hint="The forward pass matches, its gradient does not: look for .detach(), .data, torch.no_grad(), or an "
             "in-place op on a tensor autograd saved for the backward pass.")


def expect_deterministic(ctx: CheckContext, problem: Problem, case: Case) -> None:
    from quizprep.grader.invariants import nondeterminism, same_values

    if not same_values(problem.run(ctx, case), problem.run(ctx.reseeded(1), case)):
        raise CheckFailure("two calls with the same inputs returned different outputs", tried=case.label,
                           named=nondeterminism())


def expect_no_leak(ctx: CheckContext, problem: Problem, case: Case, altered: Case,
                   leak: Callable[[dict[str, Tensor], dict[str, Tensor]], Mismatch | None],
                   message: str, hint: str, quiz: str) -> None:
    """Fail with `message` when `leak(before, after)` finds outputs that moved. When the outputs
    were wrong to begin with, the cause is that mistake, and the failure names it."""
    before, after = problem.run(ctx, case), problem.run(ctx, altered)
    moved = leak(before, after)
    if moved is None:
        return
    for wrong_case, actual in ((case, before), (altered, after)):
        found = mismatches(wrong_case, actual)
        if found:
            failure = failure_for(ctx, problem, wrong_case, actual, found, ctx.seed, None, message=message)
            failure.mismatches.insert(0, moved)
            if not failure.diagnosis_id:
                failure.hint = ("The outputs differ from the reference even before anything is perturbed; "
                                "fix the first failing check and this one follows.")
            raise failure
    raise CheckFailure(message, tried=case.label, hint=hint, quiz=quiz, mismatches=[moved])


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
        if not isinstance(now, Tensor) or not torch.equal(before, now):
            raise CheckFailure(f"`{name}` was modified in place", tried=tried, hint=hint, named=in_place_write(
                f"your code wrote into its input `{name}`: an in-place op changed the caller's tensor"))


def dtype_not_kept(got: torch.dtype, want: torch.dtype) -> Diagnosis:
    """A result in another dtype than its input's: work done in float32 or float64 (an upcast, a
    buffer allocated with the default dtype) and never cast back."""
    got_name, want_name = (str(dtype).removeprefix("torch.") for dtype in (got, want))
    return Diagnosis("dtype-not-kept", f"the result comes back as {got_name} for {want_name} input: it was computed "
                     "or allocated in another dtype and never cast back",
                     "Return the input's dtype: cast back at the end (.to(x.dtype), .astype(x.dtype)), and give "
                     "buffers the input's dtype (zeros_like, dtype=x.dtype).", lesson("numerics-fp32-softmax"))


def first_output_checks(actual: Any, names: tuple[str, ...], what: str) -> dict[str, Tensor]:
    """Turn the learner's return value into named tensors, or fail with a plain reason."""
    from quizprep.grader.learner_side.protocol import Opaque

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
    from quizprep.grader.learner_side.protocol import Opaque

    if isinstance(value, Opaque):
        return f"a {value.description}"
    if isinstance(value, Tensor):
        return f"a single Tensor of shape {tuple(value.shape)}"
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    return "None" if value is None else f"a {type(value).__name__}"
