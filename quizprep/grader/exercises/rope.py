"""Checks for exercises/rope.py: rotary position embeddings in both layouts.

    apply_rope(x, positions, base=10000.0, layout="half", rotary_dim=None) -> Tensor

The reference builds one 2 × 2 rotation matrix per position and pair in float64 and applies it
to the pairs each layout names; the named mistakes are replayed with the elementwise formula
code uses, each with one thing changed. Correct code computes its angles in float32 (Hugging
Face's and GPT-NeoX's do, whatever the input's dtype), so the tolerance allows float32's rounding
of the largest angle on top of the output dtype's own.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from quizprep.grader.compare import SAFETY, UNIT_ROUNDOFF, WORKING_PRECISION, Tolerance
from quizprep.grader.context import CheckContext
from quizprep.grader.lessons import lesson
from quizprep.grader.perf import perf_phase
from quizprep.grader.problem import (
    Case, FunctionProblem, Hypothesis, failure_for, first_output_checks, mismatches, verify,
)
from quizprep.grader.spec import Check, CheckFailure, ExerciseSpec
from quizprep.grader.bound_names import Naming
from quizprep.grader.exercises._rope_rotation import (
    HALF, INTERLEAVED, inverse_frequencies, layouts_mixed, pairs, simulate,
)
from quizprep.grader.value_lines import ValueTell

F32, F64 = torch.float32, torch.float64
ENTRY = "apply_rope"
# float32 angles of correct code: the product position·θ and θ itself each rounded once.
ANGLE_SAFETY = 8.0


def positions_of(sizes: dict[str, int]) -> Tensor:
    return sizes["offset"] + sizes.get("stride", 1) * torch.arange(sizes["tokens"])


def reference_rope(x: Tensor, positions: Tensor, base: float, layout: str, rotary: int) -> Tensor:
    """Rotation matrices R[p, i] = [[cos, −sin], [sin, cos]] of angle p·θ_i, applied to each pair."""
    angles = positions.to(F64)[:, None] * inverse_frequencies(rotary, base)
    cos, sin = angles.cos(), angles.sin()
    rotations = torch.stack([torch.stack([cos, -sin], -1), torch.stack([sin, cos], -1)], -2)  # (n, r/2, 2, 2)
    a, b = pairs(rotary, layout)
    x = x.to(F64)
    planes = torch.stack([x[..., a], x[..., b]], -1)  # (B, H, n, r/2, 2)
    turned = (rotations @ planes.unsqueeze(-1)).squeeze(-1)
    out = x.clone()
    out[..., a], out[..., b] = turned[..., 0], turned[..., 1]
    return out


def build(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    generator = torch.Generator().manual_seed(seed)
    dtype, layout, base = variant.get("dtype", F32), variant.get("layout", HALF), variant.get("base", 10000.0)
    batch, heads, tokens, d = (sizes[key] for key in ("batch", "heads", "tokens", "d"))
    rotary = sizes.get("rotary", d)
    x = torch.randn(batch, heads, tokens, d, generator=generator, dtype=F64).to(dtype)
    positions = positions_of(sizes)
    out = reference_rope(x, positions, base, layout, rotary)
    largest_angle = float(positions.max()) if tokens else 0.0
    scale = max(1.0, float(x.double().abs().max()))
    working = WORKING_PRECISION[dtype]
    atol = (SAFETY[working] * UNIT_ROUNDOFF[working]
            + ANGLE_SAFETY * UNIT_ROUNDOFF[F32] * (1.0 + largest_angle)) * scale
    tolerance = Tolerance(atol, atol / (SAFETY[working] * UNIT_ROUNDOFF[working]))
    span = f"{int(positions[0])}" if tokens == 1 else f"{int(positions[0])}..{int(positions[-1])}"
    stride = f" every {sizes['stride']}" if sizes.get("stride", 1) > 1 else ""
    partial = f", rotary_dim={rotary}" if rotary != d else ""
    label = (f"x (B={batch}, H={heads}, n={tokens}, d={d}), positions {span}{stride}, layout={layout!r}{partial}, "
             f"{str(dtype).removeprefix('torch.')}")
    return Case(label=label, sizes=dict(sizes), variant=dict(variant),
                data={"x": x, "positions": positions, "base": base, "layout": layout, "rotary": rotary},
                expected={"out": out}, tolerance={"out": tolerance},
                dims={"out": ("batch", "head", "token", "feature")})


def run(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
    data = case.data
    rotary = None if data["rotary"] == data["x"].shape[-1] else data["rotary"]
    reply = ctx.call(ENTRY, data["x"], data["positions"], data["base"], data["layout"], rotary, options=options)
    return first_output_checks(reply.value, ("out",), ENTRY)


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    smaller = []
    for key, least in (("tokens", 1), ("batch", 1), ("heads", 1)):
        if sizes[key] > least:
            smaller.append({**sizes, key: max(least, sizes[key] // 2)})
    return smaller


def _mistake(**mistake: Any):
    def predict(case: Case) -> dict[str, Tensor] | None:
        if mistake.get("whole_head") and case.data["rotary"] == case.data["x"].shape[-1]:
            return None
        if mistake.get("angle_dtype") is not None and case.data["x"].dtype == F64:
            return None
        return simulate(case, **mistake)

    return predict


def tables(case: Case, positions: Tensor) -> list[Tensor]:
    """The angles position · θ_i and their cos and sin, (n, r/2), as code builds them."""
    angles = positions.to(F64)[:, None] * inverse_frequencies(case.data["rotary"], case.data["base"])
    return [angles, angles.cos(), angles.sin()]


def _from_zero(case: Case) -> dict[str, list[Tensor]]:
    """Positions 0..n−1 and the tables at them, where `positions` starts at the cache's length."""
    from_zero = torch.arange(len(case.data["positions"]))
    return {"out": [from_zero, *tables(case, from_zero)]}


def _in_place_of_zero(case: Case) -> list[Tensor]:
    """The frequencies, the tables at `positions` and every feature index: an arange over the head's
    features is no position."""
    x = case.data["x"]
    return [inverse_frequencies(case.data["rotary"], case.data["base"]), *tables(case, case.data["positions"]),
            torch.arange(x.shape[-1])]


def _apart_from_zero(sizes: dict[str, int]) -> dict[str, int]:
    """More tokens than features, so that positions from 0 are no feature indices, and rows 0 and 1
    (zeros, ones, θ_i itself) are not all there is; the cache at least as long as them, so that
    positions from 0 are none of the true positions either (gpt-neox's arange(seq_len) after 3 cached
    tokens held only positions and features correct code holds too)."""
    tokens = max(sizes["tokens"], sizes["d"] + 2)
    return {**sizes, "tokens": tokens, "offset": max(sizes["offset"], tokens)}


OFFSET_TELL = ValueTell(_from_zero, _in_place_of_zero, _apart_from_zero)


def _first_of_pairs_negated(case: Case) -> dict[str, list[Tensor]]:
    """rotate_half turned the wrong way, cat(x2, −x1): the pairs' first features negated, which no
    correct form makes (rotate_half negates the second, a sin table's sign flipped negates no feature)."""
    x = case.data["x"].to(F64)
    first, _ = pairs(case.data["rotary"], case.data["layout"])
    return {"out": [-x[..., first]]}


def _second_of_pairs_negated(case: Case) -> list[Tensor]:
    x = case.data["x"].to(F64)
    _, second = pairs(case.data["rotary"], case.data["layout"])
    return [-x[..., second], *tables(case, case.data["positions"])]


def _low_precision(case: Case) -> list[dict[str, Tensor]] | None:
    """Angles in the input's half dtype: the positions cast first, only the float32 product rounded, or
    only the positions rounded (an arange in x.dtype) and then multiplied in float32."""
    dtype = case.data["x"].dtype
    if dtype not in (torch.float16, torch.bfloat16):
        return None
    return [simulate(case, angle_dtype=dtype, cast_positions=cast) for cast in (True, False)] + [
        simulate(case, angle_dtype=dtype, round_angles=False)]


def _rotate_half_by_cos(case: Case) -> dict[str, list[Tensor]]:
    """sin and cos traded where they are used with rotate_half: cat(−x2, x1) · cos, whose −b·cos no correct
    form makes (rotate_half's −b meets sin). Where the tables themselves are swapped, the products are
    correct code's, and only their names tell (`sin` holding the cosines)."""
    x = case.data["x"].to(F64)
    first, second = pairs(case.data["rotary"], case.data["layout"])
    cos = tables(case, case.data["positions"])[1]
    return {"out": [-x[..., second] * cos, x[..., first] * cos]}


def _products(case: Case) -> list[Tensor]:
    """Each half of each pair times each table, and rotate_half's −b times sin."""
    x = case.data["x"].to(F64)
    first, second = pairs(case.data["rotary"], case.data["layout"])
    _, cos, sin = tables(case, case.data["positions"])
    return [x[..., first] * cos, x[..., first] * sin, x[..., second] * cos, x[..., second] * sin,
            -x[..., second] * sin, -x[..., second], cos, sin]


def _table_names(case: Case) -> Naming:
    """`sin` holds the sines and `cos` the cosines; no name holds the sines negated (a table's sign
    flipped, or angles turned the other way)."""
    angles, cos, sin = (table.flatten().sort().values for table in tables(case, case.data["positions"]))
    return Naming({"sin": sin, "cos": cos}, (-sin).sort().values, max(1.0, float(angles.abs().max())))


def _turned(case: Case, **mistake: Any) -> list[Tensor]:
    """The rotated pairs' halves with a mistake: quoted where they are first computed only when the
    tables the line reads are named for what they hold (a swap or a sign on a line above passes them
    on, correctly named or not)."""
    first, second = pairs(case.data["rotary"], case.data["layout"])
    out = simulate(case, **mistake)["out"]
    return [out[..., first], out[..., second]]


def _swapped_halves(case: Case) -> dict[str, list[Tensor]]:
    return {"out": [*_rotate_half_by_cos(case)["out"], *_turned(case, swap=True)]}


SWAP_TELL = ValueTell(_swapped_halves, _products, names=_table_names)


def _reversed_halves(case: Case) -> dict[str, list[Tensor]]:
    return {"out": [*_first_of_pairs_negated(case)["out"], *_turned(case, sign=-1.0)]}


REVERSED_TELL = ValueTell(_reversed_halves, _second_of_pairs_negated, names=_table_names)


def _positions_rounded(case: Case) -> dict[str, list[Tensor]]:
    """The positions held in x's 16-bit dtype: whole numbers, most of them no position at all (32,767 is
    32,768 in bfloat16), on the line that casts them whatever the angles are computed in after."""
    return {"out": [case.data["positions"].to(case.data["x"].dtype).to(F64)]}


def _positions_and_tables(case: Case) -> list[Tensor]:
    return [case.data["positions"], *tables(case, case.data["positions"])]


HYPOTHESES = (
    Hypothesis("rope-layout-swapped", "the other layout is used somewhere: its pairs (2i, 2i + 1) where (i, i + r/2) "
               "was asked, or the reverse; pairs read in one layout and written back in the other; or cos and sin "
               "tables laid out for the other layout (tiled where interleaved, or the reverse)",
               "layout='half' pairs feature i with i + r/2 (rotate_half, tables cat([θ, θ])); layout='interleaved' "
               "pairs 2i with 2i + 1 (x[..., 0::2], x[..., 1::2], tables θ.repeat_interleave(2)); both features "
               "of a pair are turned by its one angle and written back where they were read.",
               lesson("position-rope-layout-code"), layouts_mixed),
    Hypothesis("rope-frequency-exponent", "the frequencies are base^(−i/r), not base^(−2i/r): the exponent "
               "counts pairs where it should count features", "inv_freq = base ** (-torch.arange(0, r, 2) / r): "
               "pair i sits at features 2i and 2i + 1, hence 2i/r.", lesson("position-rope-wavelength"),
               _mistake(exponent=1.0)),
    Hypothesis("rope-sin-cos-swapped", "sin and cos are swapped: each pair is turned by 90° − angle",
               "(a, b) → (a·cos − b·sin, a·sin + b·cos): at position 0 the rotation is the identity.",
               lesson("rope-rotation-formula"), _mistake(swap=True), tell=SWAP_TELL),
    Hypothesis("rope-rotation-reversed", "the rotation turns the wrong way: the sign of sin is flipped, as in "
               "(a·cos + b·sin, b·cos − a·sin)", "(a, b) → (a·cos − b·sin, a·sin + b·cos); rotate_half(x) is "
               "cat(−x2, x1), not cat(x2, −x1).", lesson("rope-rotation-formula"), _mistake(sign=-1.0),
               tell=REVERSED_TELL),
    Hypothesis("rope-offset-ignored", "positions counted from 0 instead of taken from `positions`: during "
               "decode the new token is rotated as if it were the first", "Rotate token j by positions[j]: "
               "a decode step after T cached tokens is at position T.", lesson("position-rope-kv-cache"),
               _mistake(from_zero=True), tell=OFFSET_TELL),
    Hypothesis("rope-angles-low-precision", "the angles are computed in the input's half precision: at long "
               "positions bfloat16 and float16 cannot even hold the position", "Compute position · θ_i, cos and "
               "sin in float32 (positions.float()), rotate, then cast the result back to x.dtype.",
               lesson("rope-angle-precision"), _low_precision,
               tell=ValueTell(_positions_rounded, _positions_and_tables)),
    Hypothesis("rope-partial-ignored", "the whole head is rotated although rotary_dim asks for its first r "
               "features only", "Rotate x[..., :r] with θ_i = base^(−2i/r) and pass x[..., r:] through unchanged.",
               lesson("rope-partial-rotary"), _mistake(whole_head=True)),
)

PROBLEM = FunctionProblem(HYPOTHESES, build, run, shrink)


def _sizes(tokens: int = 7, offset: int = 3, d: int = 8, batch: int = 2, heads: int = 3, rotary: int | None = None,
           stride: int = 1) -> dict[str, int]:
    return {"batch": batch, "heads": heads, "tokens": tokens, "d": d, "rotary": rotary or d, "offset": offset,
            "stride": stride}


def check_half(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(), {"layout": HALF}, ctx.seed + 10)
    verify(ctx, PROBLEM, _sizes(tokens=5, offset=0, d=12), {"layout": HALF, "dtype": F64}, ctx.seed + 11)
    return "layout='half' on float32 and float64, d = 8 and 12"


def check_interleaved(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(), {"layout": INTERLEAVED}, ctx.seed + 20)
    verify(ctx, PROBLEM, _sizes(tokens=5, offset=0, d=12), {"layout": INTERLEAVED, "dtype": F64}, ctx.seed + 21)
    return "layout='interleaved' on float32 and float64"


def check_decode(ctx: CheckContext) -> str:
    for layout, seed in ((HALF, 30), (INTERLEAVED, 31)):
        verify(ctx, PROBLEM, _sizes(tokens=1, offset=37), {"layout": layout}, ctx.seed + seed)
        verify(ctx, PROBLEM, _sizes(tokens=4, offset=21), {"layout": layout}, ctx.seed + seed + 2)
    return "one new token at position 37 and a chunk of 4 at 21..24 after a cache"


def check_long_context(ctx: CheckContext) -> str:
    for dtype, seed in ((torch.bfloat16, 40), (torch.float16, 41)):
        verify(ctx, PROBLEM, _sizes(tokens=64, offset=32768 - 64 * 509, d=16, batch=1, heads=2, stride=509),
               {"layout": HALF, "dtype": dtype, "base": 10000.0}, ctx.seed + seed)
    verify(ctx, PROBLEM, _sizes(tokens=2048, offset=30720, d=16, batch=1, heads=1),
           {"layout": INTERLEAVED, "dtype": torch.bfloat16, "base": 500000.0}, ctx.seed + 42)
    # Positions of no fixed size: a file that tells the long inputs apart (their largest position) and
    # computes its angles right only for them fails here (sixth red team).
    offset = ctx.draw(43, 200, 4000)
    verify(ctx, PROBLEM, _sizes(tokens=32, offset=offset, d=16, batch=1, heads=2),
           {"layout": HALF, "dtype": torch.bfloat16}, ctx.seed + 43)
    return ("bfloat16 and float16 at positions up to 32,767; 2048 consecutive positions from 30,720; "
            f"bfloat16 at {offset}..{offset + 31}")


def check_partial(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(d=16, rotary=4), {"layout": HALF}, ctx.seed + 50)
    verify(ctx, PROBLEM, _sizes(d=12, rotary=8), {"layout": INTERLEAVED}, ctx.seed + 51)
    return "GPT-NeoX's rotary_pct = 0.25 (half) and GPT-J's rotary_dim (interleaved)"


def check_relative(ctx: CheckContext) -> str:
    """q·k of the rotated vectors depends on the positions' difference only: shifting both by the
    same amount leaves every score as it was."""
    shift = 1000
    sizes = _sizes(tokens=6, offset=2, d=8, batch=1, heads=2)
    scores = []
    for offset in (sizes["offset"], sizes["offset"] + shift):
        shifted = {**sizes, "offset": offset}
        q_case = build(shifted, {"layout": HALF}, ctx.seed + 60)
        k_case = build(shifted, {"layout": HALF}, ctx.seed + 61)
        q, k = run(ctx, q_case)["out"], run(ctx, k_case)["out"]
        for case, actual in ((q_case, {"out": q}), (k_case, {"out": k})):
            found = mismatches(case, actual)
            if found:
                raise failure_for(ctx, PROBLEM, case, actual, found, ctx.seed, None)
        scores.append(q.double() @ k.double().transpose(-2, -1))
    moved = float((scores[0] - scores[1]).abs().max())
    tolerance = q_case.tolerance["out"].atol * q.shape[-1] * 4
    if moved > tolerance:
        raise CheckFailure(f"the scores q·k change by up to {moved:.3g} when both positions shift by {shift}",
                           tried=sizes_label(sizes), hint="Rotate by the position itself, nothing else: "
                           "(R(m)q)·(R(n)k) = q·R(n − m)k.", quiz=lesson("position-rope-relative-code"))
    return f"q·k unchanged when every position shifts by {shift}"


def sizes_label(sizes: dict[str, int]) -> str:
    return f"q and k (1, 2, 6, 8) at positions {sizes['offset']}..{sizes['offset'] + sizes['tokens'] - 1}"


USAGE = {
    "half": "Hugging Face Llama, Mistral, Qwen and GPT-NeoX: rotate_half on (B, H, n, d) queries and keys",
    "interleaved": "GPT-J, Meta's original Llama (complex multiply) and RoFormer: consecutive pairs",
    "decode": "a decode step and a chunked prefill on a KV cache: positions start at the cache's length",
    "long-context": "32k-context serving in bfloat16 and float16 (Llama 3's base 500,000)",
    "partial": "GPT-NeoX (rotary_pct 0.25) and GPT-J (rotary_dim 64 of 256): part of each head is rotated",
    "relative": "what RoPE is for: a score depends on the distance between two tokens, not where they sit",
}

SPEC = ExerciseSpec(
    name="rope",
    title="Rotary position embeddings (RoPE), half and interleaved layouts",
    entry_points=(ENTRY,),
    lessons=("position-rope-layout-code", "position-rope-wavelength", "rope-rotation-formula",
             "position-rope-kv-cache", "rope-angle-precision", "rope-partial-rotary", "position-rope-relative-code"),
    checks=(
        Check("half", "layout='half' (GPT-NeoX, Hugging Face Llama)", check_half),
        Check("interleaved", "layout='interleaved' (GPT-J, RoFormer)", check_interleaved),
        Check("decode", "positions that start at a KV cache's length", check_decode),
        Check("long-context", "half-precision inputs at positions up to 32k, and below 4k", check_long_context),
        Check("partial", "a partial rotary_dim leaves the other features alone", check_partial),
        Check("relative", "q·k depends only on the positions' difference", check_relative),
    ),
    perf=perf_phase("rope"),
)
