"""What a Triton attention kernel returns with one slip of issue 31's held-out set, for the
hypotheses of :mod:`.flash_triton`: scales, exp bases, masks, pointers and loop bounds, each replayed
in float64 (float32 where the slip is an underflow) by :mod:`._kernel_sim`."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch
from torch import Tensor

from quizprep.grader.compare import close_elements
from quizprep.grader.exercises import _kernel_sim as sim
from quizprep.grader.learner_side.call_values import Preparer
from quizprep.grader.problem import Case, Hypothesis

LOG2E, LN2 = 1 / math.log(2.0), math.log(2.0)
Forms = list[dict[str, Tensor]]


def tensors(case: Case) -> tuple[Tensor, Tensor, Tensor]:
    return case.data["q"], case.data["k"], case.data["v"]


def allowed(case: Case) -> Tensor | None:
    return sim.causal_allowed(case.sizes["n"]) if case.data["causal"] else None


def _rescaled(case: Case, factor: float) -> dict[str, Tensor]:
    """Out with the scores' scale multiplied by `factor`; lse is left out: kernels store it in
    too many ways once the scale is wrong."""
    scale = factor / math.sqrt(case.sizes["d"])
    return {"out": sim.exact(*tensors(case), allowed(case), scale)["out"]}


def no_scale(case: Case) -> Forms:
    """Scores never multiplied by 1/√d: out is the softmax of q·k."""
    return [_rescaled(case, math.sqrt(case.sizes["d"]))]


def exp2_without_log2e(case: Case) -> Forms:
    """tl.exp2 of scores never multiplied by log2(e): 2^x = e^(x·ln 2), every score shrunk by ln 2."""
    return [_rescaled(case, LN2)]


def log2e_with_exp(case: Case) -> Forms:
    """log2(e) folded into the scale but tl.exp kept: every score grown by log2(e)."""
    return [_rescaled(case, LOG2E)]


def causal_strict(case: Case) -> Forms | None:
    """`>` for `>=` in the causal mask: query i sees keys j < i, its own key hidden (row 0 sees none)."""
    if not case.data["causal"]:
        return None
    n = case.sizes["n"]
    return [sim.exact(*tensors(case), sim.causal_allowed(n) & ~torch.eye(n, dtype=torch.bool))]


def diagonal_twice(case: Case) -> Forms | None:
    if not case.data["causal"]:
        return None
    n = case.sizes["n"]
    return [sim.weighted(*tensors(case), sim.diagonal_twice(n, block)) for block in sim.TILES if block < 2 * n]


def k_other_inf(case: Case) -> Forms | None:
    """K's missing rows loaded as -inf and the scores left unmasked: q·(-inf, …) is ±inf or NaN
    (inf − inf), and NaN spreads through the max and the sums to every row whose loop reaches the
    ragged key tile (all of them, unless causal)."""
    n = case.sizes["n"]
    forms = []
    for block_m, block_n in itertools.product(sim.TILES, sim.TILES):
        if n % block_n == 0 or block_m >= 2 * n:
            continue
        rows = torch.ones(n, dtype=torch.bool)
        if case.data["causal"]:  # a query tile stops after its diagonal key tile
            rows = (torch.arange(n) // block_m + 1) * block_m > n // block_n * block_n
        out = case.expected["out"].clone()
        out[..., rows, :] = float("nan")
        forms.append({"out": out})
    return forms or None


def max_start_zero(case: Case) -> Forms:
    """The running max started at 0 instead of -inf: rows whose scores all lie far below 0 underflow
    in float32 (exp(s − 0) = 0), so ℓ = 0 and the row is 0/0."""
    return [sim.online(*tensors(case), allowed(case), block, max_start=0.0, dtype=torch.float32)
            for block in sim.TILES]


def sum_not_rescaled(case: Case) -> Forms:
    """ℓ never rescaled, from either start a kernel gives it (0, or 1 as FlagGems does)."""
    return [sim.online(*tensors(case), allowed(case), block, rescale_sum=False, sum_start=start)
            for block in sim.TILES for start in (0.0, 1.0)]


def no_rescale_running_lse(case: Case) -> Forms:
    """The accumulator not rescaled in a kernel that keeps the running lse instead of ℓ (flash-attention's
    Triton kernel): its tile max is max(tile max, lse so far) and the output is scaled once at the end
    by exp(m − lse), m the last visited tile's. Causal, a query tile stops after its diagonal key tile."""
    q, k, v = (tensor.double() for tensor in tensors(case))
    scores, n, mask = sim.scaled_scores(q, k), case.sizes["n"], allowed(case)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    found = []
    for block_m, block_n in itertools.product(sim.TILES, sim.TILES):
        if block_n > block_m or (mask is None and block_m > sim.TILES[0]):
            continue  # without a causal loop bound the query tile changes nothing
        tile_end = ((torch.arange(n) // block_m + 1) * block_m).clamp(max=n).unsqueeze(-1)
        lse = torch.full((*scores.shape[:-1], 1), float("-inf"), dtype=torch.float64)
        acc, row_max = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=torch.float64), lse
        for start in range(0, n, block_n):
            visited = start < tile_end if mask is not None else torch.tensor(True)
            tile = scores[..., start:start + block_n]
            new_max = torch.maximum(tile.amax(-1, keepdim=True), lse)
            p = (tile - new_max).exp()
            acc = torch.where(visited, acc + p @ v[..., start:start + block_n, :], acc)
            lse = torch.where(visited, new_max + ((lse - new_max).exp() + p.sum(-1, keepdim=True)).log(), lse)
            row_max = torch.where(visited, new_max, row_max)
        found.append({"out": acc * (row_max - lse).exp()})
    return found


def wrong_strides(case: Case) -> Forms | None:
    """Each input read through another input's strides, or contiguous ones, or its own with a unit
    feature stride assumed: every combination whose reads stay inside the inputs' memory."""
    layouts = case.variant.get("layouts")
    if not layouts:
        return None
    views = [Preparer("cpu", layout, False)(tensor) for tensor, layout in zip(tensors(case), layouts)]
    shape = views[0].shape
    choices = [view.stride() for view in views] + [sim.contiguous_strides(shape)]
    forms = []
    for picks in itertools.product(range(len(choices) + 1), repeat=3):
        read = [sim.read_with_strides(view, choices[pick] if pick < len(choices) else view.stride()[:-1] + (1,))
                for view, pick in zip(views, picks)]
        q, k, v = read
        if picks != (0, 1, 2) and q is not None and k is not None and v is not None:
            forms.append(sim.exact(q, k, v, allowed(case)))
    return forms


@dataclass(frozen=True)
class LseIgnoresBatch(Hypothesis):
    """The lse pointer steps over heads but not batches: every batch writes batch 0's rows (the last
    to run wins) and the other batches' rows keep whatever torch.empty held. Out is right."""

    def explains(self, case: Case, actual: dict[str, Tensor]) -> bool:
        got, want, tolerance = actual["lse"], case.expected["lse"], case.tolerance["lse"]
        if got.shape != want.shape or got.shape[0] < 2:
            return False
        if not close_elements(actual["out"], case.expected["out"], case.tolerance["out"]).all():
            return False
        first_from_a_batch = all(any(bool(close_elements(got[0, h], want[b, h], tolerance).all())
                                     for b in range(want.shape[0])) for h in range(want.shape[1]))
        return first_from_a_batch and not bool(close_elements(got[1:], want[1:], tolerance).all())


@dataclass(frozen=True)
class UnmaskedTailStore(Hypothesis):
    """The out store has no row mask: a query tile that runs past n writes its phantom rows over the
    first rows of the next (batch, head) slice of a contiguous out (the last slice's spill lands past
    the tensor). Which program writes last is the launch order's, so the rule is where the errors lie:
    only in those first rows, lse right."""

    def explains(self, case: Case, actual: dict[str, Tensor]) -> bool:
        got, want = actual["out"], case.expected["out"]
        if got.shape != want.shape or not close_elements(actual["lse"], case.expected["lse"],
                                                          case.tolerance["lse"]).all():
            return False
        wrong = ~close_elements(got, want, case.tolerance["out"]).all(-1).reshape(-1, case.sizes["n"])
        if not bool(wrong.any()) or bool(wrong[0].any()):
            return False
        return any(not bool(wrong[:, spill:].any()) for spill in {-case.sizes["n"] % block for block in sim.TILES}
                   if spill)


def diagonal_unmasked_with_phantoms(case: Case) -> Forms:
    """The diagonal tile used whole where its causal mask was also the only mask at the ragged edge
    (a two-stage kernel masks columns ≥ n in its off-band stage only): the last query tile's diagonal
    tile then runs past n, and its phantom keys (loaded as 0: score 0, value 0) join the softmax."""
    if not case.data["causal"]:
        return []
    q, k, v = (tensor.double() for tensor in tensors(case))
    n, found = case.sizes["n"], []
    for block_m, block_n in itertools.product(sim.TILES, sim.TILES):
        padded = -(-n // block_n) * block_n
        if block_n > block_m or block_m >= 2 * n or padded == n:
            continue
        zeros = torch.zeros(*k.shape[:-2], padded - n, k.shape[-1], dtype=torch.float64)
        tile_end = (torch.arange(n).unsqueeze(-1) // block_m + 1) * block_m
        visible = torch.arange(padded).unsqueeze(0) // block_n * block_n < tile_end
        found.append(sim.exact(q, torch.cat([k, zeros], -2), torch.cat([v, zeros], -2), visible))
    return found
