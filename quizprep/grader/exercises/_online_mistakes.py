"""The online softmax exercise's named slips: each is the learner's chunk loop, update or merge
with one thing done wrong, computed in float64 from the very inputs the learner received."""
from __future__ import annotations

import torch
from torch import Tensor

from quizprep.grader.lessons import lesson
from quizprep.grader.problem import Case, Hypothesis, either

F32, F64 = torch.float32, torch.float64
NEG_INF = float("-inf")


def state_of(x: Tensor) -> tuple[Tensor, Tensor]:
    """(max, Σ exp(x − max)) per row in float64; (−inf, 0) for a row with nothing visible."""
    x = x.double()
    row_max = x.amax(dim=-1) if x.shape[-1] else torch.full(x.shape[:-1], NEG_INF, dtype=F64)
    finite = row_max.masked_fill(torch.isneginf(row_max), 0.0)
    return row_max, (x - finite.unsqueeze(-1)).exp().sum(dim=-1)


def stream(x: Tensor, chunk: int, *, rescale: str = "right", guard: bool = True,
           skip_empty_start: bool = False) -> Tensor:
    """The learner's loop with one slip: softmax of x from a chunk-by-chunk state, in float64."""
    x = x.double()
    row_max = torch.full(x.shape[:-1], NEG_INF, dtype=F64)
    row_sum = torch.zeros_like(row_max)
    for start in range(0, x.shape[-1], chunk):
        part = x[..., start:start + chunk]
        new_max = torch.maximum(row_max, part.amax(dim=-1))
        base = new_max.masked_fill(torch.isneginf(new_max), 0.0) if guard else new_max
        factor = {"right": (row_max - base).exp(), "none": torch.ones_like(row_max),
                  "inverted": (base - row_max).exp()}[rescale]
        if skip_empty_start:  # a loop that starts from the first chunk's own state
            factor = torch.where(torch.isneginf(row_max), torch.zeros_like(factor), factor)
        row_sum = row_sum * factor + (part - base.unsqueeze(-1)).exp().sum(dim=-1)
        row_max = new_max
    return (x - row_max.unsqueeze(-1)).exp() / row_sum.unsqueeze(-1)


def _update(rescale: str):
    def predict(case: Case) -> dict[str, Tensor] | None:
        op, data = case.variant["op"], case.data
        if op == "softmax":
            return {"out": stream(data["x"], data["chunk"], rescale=rescale, skip_empty_start=True)}
        if op != "update":
            return None
        old_max, old_sum = (t.double() for t in data["state"])
        chunk_max, chunk_sum = state_of(data["chunk"])
        new_max = torch.maximum(old_max, chunk_max)
        factor = torch.ones_like(old_max) if rescale == "none" else (new_max - old_max).exp()
        return {"max": new_max, "sum": old_sum * factor + chunk_sum * (chunk_max - new_max).exp()}

    return predict


def _two_states(case: Case) -> tuple[tuple[Tensor, Tensor], tuple[Tensor, Tensor]] | None:
    """The two states a merge combines: the merge's own, or an update's old state and its chunk's."""
    op, data = case.variant["op"], case.data
    if op == "merge":
        max_a, sum_a = (t.double() for t in data["a"])
        max_b, sum_b = (t.double() for t in data["b"])
        return (max_a, sum_a), (max_b, sum_b)
    if op == "update":
        old_max, old_sum = (t.double() for t in data["state"])
        return (old_max, old_sum), state_of(data["chunk"])
    return None


def _merge_slip(kind: str):
    """A merge slip, in the merge and in an update that merges the chunk's own state into the old."""
    def predict(case: Case) -> dict[str, Tensor] | None:
        states = _two_states(case)
        if states is None:
            return None
        (max_a, sum_a), (max_b, sum_b) = states
        if kind == "added":
            return {"max": torch.maximum(max_a, max_b), "sum": sum_a + sum_b}
        if kind == "inverted":  # each sum scaled by exp(m − m_own) ≥ 1; an empty side (−inf) adds nothing
            row_max = torch.maximum(max_a, max_b)
            sums = [(total * (row_max - own).exp()).masked_fill(torch.isneginf(own), 0.0)
                    for own, total in ((max_a, sum_a), (max_b, sum_b))]
            return {"max": row_max, "sum": sums[0] + sums[1]}
        return {"max": max_a, "sum": sum_a + sum_b * (max_b - max_a).exp()}

    return predict


def _smaller_max(case: Case) -> dict[str, Tensor] | None:
    """The merge's comparison flipped: both sums brought to the smaller maximum (exp of a positive
    gap for the other), in the merge and in an update that merges the chunk's own state; from the
    empty state the maximum stays −inf."""
    states = _two_states(case)
    if states is None:
        return None
    (max_a, sum_a), (max_b, sum_b) = states
    low = torch.minimum(max_a, max_b)
    finite = low.masked_fill(torch.isneginf(low), 0.0)
    total = sum_a * (max_a - finite).exp() + sum_b * (max_b - finite).exp()
    # Kept at −inf (one side empty), the state means "nothing seen", whatever its sum (see _meaning).
    return {"max": low, "sum": total.masked_fill(torch.isneginf(low), 0.0)}


def _unguarded(case: Case) -> list[dict[str, Tensor]] | None:
    """exp(m − m_new) with both −inf: NaN, then NaN for good. Where it strikes depends on what one
    step folds: a whole chunk (NaN when a chunk all −inf comes before any finite logit), one logit
    at a time (a scalar loop: NaN when the row's first logit is −inf), or lanes, one state per
    position of the chunk merged at the end (a Triton kernel's per-lane state: NaN when any logit of
    the first chunk is −inf, that lane's first)."""
    op, data = case.variant["op"], case.data
    if op == "softmax":
        x, chunk = data["x"], data["chunk"]
        right = stream(x, chunk)
        lanes = torch.isneginf(x[..., :chunk]).any(dim=-1, keepdim=True)
        return [{"out": stream(x, chunk, guard=False)}, {"out": stream(x, 1, guard=False)},
                {"out": right.masked_fill(lanes, float("nan"))}]
    if op == "update":
        old_max, old_sum = (t.double() for t in data["state"])
        chunk_values = data["chunk"].double()
        new_max = torch.maximum(old_max, chunk_values.amax(dim=-1))
        whole = old_sum * (old_max - new_max).exp() + (chunk_values - new_max.unsqueeze(-1)).exp().sum(dim=-1)
        base = new_max.masked_fill(torch.isneginf(new_max), 0.0)
        right = old_sum * (old_max - base).exp() + (chunk_values - base.unsqueeze(-1)).exp().sum(dim=-1)
        first = torch.isneginf(old_max) & torch.isneginf(chunk_values[..., 0])
        return [{"max": new_max, "sum": whole}, {"max": new_max, "sum": right.masked_fill(first, float("nan"))}]
    return None


def _no_shift(case: Case) -> dict[str, Tensor] | None:
    if case.variant["op"] != "softmax":
        return None
    x = case.data["x"]
    exps = x.to(F32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype).exp()
    return {"out": (exps / exps.sum(dim=-1, keepdim=True)).double()}


HYPOTHESES = (
    Hypothesis("online-no-rescale", "the running sum is not rescaled when the maximum grows",
               "ℓ_new = ℓ·exp(m_old − m_new) + Σ exp(x − m_new): the old terms were measured against m_old.",
               lesson("flash-online-softmax-bug"), _update("none")),
    Hypothesis("online-rescale-inverted", "the running sum is rescaled by exp(m_new − m_old): the wrong sign",
               "When the maximum grows the old terms shrink: the factor is exp(m_old − m_new) ≤ 1.",
               lesson("softmax-online-rescale"), either(_update("inverted"), _merge_slip("inverted"))),
    Hypothesis("merge-no-rescale", "the two sums are added without bringing them to the common maximum",
               "ℓ = ℓ_a·exp(m_a − m) + ℓ_b·exp(m_b − m) with m = max(m_a, m_b).", lesson("serving-merge-partials"),
               _merge_slip("added")),
    Hypothesis("merge-first-max", "the merge assumes the first state holds the larger maximum",
               "Take m = max(m_a, m_b) and rescale both sums to it: either half may hold the maximum.",
               lesson("serving-merge-partials"), _merge_slip("first max")),
    Hypothesis("merge-min", "the comparison that picks the merged maximum is flipped: the state keeps the "
               "smaller maximum, so the other sum is scaled by exp of a positive gap and overflows for large ones",
               "m = max(m_a, m_b) (torch.maximum, or where(m_a > m_b, m_a, m_b)); each sum is then scaled by "
               "exp(m_own − m) ≤ 1.", lesson("serving-merge-partials"), _smaller_max),
    Hypothesis("online-nan-masked-chunk", "a chunk whose logits are all −inf, seen before any finite logit, "
               "gives exp(−inf − (−inf)) = NaN", "While the running maximum is still −inf, use 0 in its place "
               "for the shift (or skip the rescale): exp(−inf − 0) = 0 is what the empty state needs.",
               lesson("masking-before-softmax"), _unguarded, nonfinite_must_match=True),
    Hypothesis("no-max-shift", "exp of the logits without the max shift: they overflow to inf and NaN",
               "Keep the running maximum and subtract it before exp.", lesson("softmax-max-shift"), _no_shift,
               nonfinite_must_match=True),
)
