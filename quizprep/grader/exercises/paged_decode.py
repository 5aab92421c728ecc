"""Checks for exercises/paged_decode.py: one decode step over a paged KV cache.

    paged_decode(q, k_pool, v_pool, block_table, seq_lens) -> out

The grader draws each sequence's keys and values as contiguous tensors (the reference attends
over those in float64), then scatters them into a pool of pages: pages in shuffled order, every
slot no sequence owns filled with stale keys and values of its own, padding entries of the block
table pointing at stale pages, and for the shared-prefix check one physical page in two rows.
The named mistakes gather the pool with one thing changed.
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from quizprep.grader import reference
from quizprep.grader.compare import Tolerance
from quizprep.grader.context import CheckContext
from quizprep.grader.lessons import lesson
from quizprep.grader.perf import perf_phase
from quizprep.grader.problem import Case, FunctionProblem, Hypothesis, expect_unchanged, first_output_checks, verify
from quizprep.grader.spec import Check, ExerciseSpec
from quizprep.grader.value_lines import ValueTell

F32, F64 = torch.float32, torch.float64
ENTRY = "paged_decode"
INPUTS = ("q", "k_pool", "v_pool", "block_table", "seq_lens")


def _pages(length: int, page_size: int) -> int:
    return -(-length // page_size)


def build(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    generator = torch.Generator().manual_seed(seed)
    dtype = variant.get("dtype", F32)
    lengths: list[int] = list(variant["lengths"])
    heads, kv_heads, d, page_size = (sizes[key] for key in ("heads", "kv_heads", "d", "page_size"))
    shared = int(variant.get("shared_pages", 0))  # sequences 0 and 1 share their first pages
    batch = len(lengths)

    def draw(*shape: int) -> Tensor:
        return (torch.randn(*shape, generator=generator, dtype=F64) * 1.5).to(dtype)

    keys = [draw(length, kv_heads, d) for length in lengths]
    values = [draw(length, kv_heads, d) for length in lengths]
    for tensors in (keys, values):
        tensors[1][:shared * page_size] = tensors[0][:shared * page_size]
    owned = [_pages(length, page_size) for length in lengths]
    used = sum(owned) - shared
    num_pages = used + 3  # stale pages nobody owns
    k_pool, v_pool = draw(num_pages, page_size, kv_heads, d), draw(num_pages, page_size, kv_heads, d)
    order = torch.randperm(num_pages, generator=generator)
    width = max(max(owned) + 2, max(lengths))
    block_table = order[torch.randint(used, num_pages, (batch, width), generator=generator)]
    cursor = 0
    for b, length in enumerate(lengths):
        for page in range(owned[b]):
            if b == 1 and page < shared:
                physical = block_table[0, page]
            else:
                physical, cursor = order[cursor], cursor + 1
            block_table[b, page] = physical
            tokens = slice(page * page_size, min(length, (page + 1) * page_size))
            count = tokens.stop - tokens.start
            k_pool[physical, :count], v_pool[physical, :count] = keys[b][tokens], values[b][tokens]
    q = draw(batch, heads, d)
    out = torch.stack([_attend(q[b], keys[b], values[b], heads) for b in range(batch)])
    logit_scale = max(float((q[b].double() @ keys[b].double().reshape(-1, d).T).abs().max()) for b in range(batch))
    logit_scale /= math.sqrt(d)
    label = (f"seq_lens {lengths}, page_size={page_size}, q (B={batch}, H={heads}, d={d}), G={kv_heads}, "
             f"{num_pages} pages in shuffled order{f', {shared} prefix page(s) shared' if shared else ''}, "
             f"{str(dtype).removeprefix('torch.')}")
    return Case(label=label, sizes=dict(sizes), variant=dict(variant),
                data={"q": q, "k_pool": k_pool, "v_pool": v_pool, "block_table": block_table,
                      "seq_lens": torch.tensor(lengths)},
                expected={"out": out},
                tolerance={"out": Tolerance.working(dtype, logit_scale, float(out.abs().max()))},
                dims={"out": ("sequence", "head", "feature")})


def _attend(q: Tensor, k: Tensor, v: Tensor, heads: int, head_map: str = "interleave") -> Tensor:
    """q (H, d) over k, v (L, G, d) in float64; query head h reads KV head h // (H / G)."""
    group = heads // k.shape[1]
    if head_map == "interleave":
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    else:
        k, v = k.repeat(1, group, 1), v.repeat(1, group, 1)
    out, _ = reference.attention(q.unsqueeze(1), k.transpose(0, 1), v.transpose(0, 1))
    return out.squeeze(1)


def run(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
    data = case.data
    reply = ctx.call(ENTRY, *(data[name] for name in INPUTS), options=options)
    return first_output_checks(reply.value, ("out",), ENTRY)


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    return [{**sizes, "d": sizes["d"] - 1}] if sizes["d"] > 2 else []


def simulate(case: Case, *, extra: int = 0, duplicate_last: bool = False, span: str = "length",
             by_position: bool = False, rows: str = "own", head_map: str = "interleave") -> dict[str, Tensor] | None:
    """Gather the pool with one mistake and attend in float64; None where the mistake would crash."""
    data = case.data
    table, lengths = data["block_table"], data["seq_lens"].tolist()
    page_size = data["k_pool"].shape[1]
    outs = []
    for b, length in enumerate(lengths):
        row = {"own": b, "first": 0, "rolled": (b - 1) % len(lengths)}[rows]
        count = {"length": length + extra, "last-page": _pages(length, page_size) * page_size,
                 "table": table.shape[1] * page_size}[span]
        positions = torch.arange(count)
        if duplicate_last:
            positions = torch.cat([positions, positions[-1:]])
        slots = positions if by_position else positions // page_size
        if count < 1:  # attention over no keys is undefined (zeros or NaN): that sequence is not compared
            outs.append(torch.full(data["q"][b].shape, float("nan"), dtype=F64))
            continue
        if int(slots.max()) >= table.shape[1]:
            return None
        pages = table[row, slots]
        k, v = (data[name][pages, positions % page_size] for name in ("k_pool", "v_pool"))
        outs.append(_attend(data["q"][b], k, v, data["q"].shape[1], head_map))
    return {"out": torch.stack(outs)}


def _mistake(*forms: dict[str, Any]):
    def predict(case: Case) -> list[dict[str, Tensor]] | None:
        if any(form.get("head_map") == "tile" for form in forms) and case.sizes["kv_heads"] in (1, case.sizes["heads"]):
            return None
        return [out for out in (simulate(case, **form) for form in forms) if out is not None] or None

    return predict


def _keys_one_off(case: Case) -> tuple[Tensor, Tensor]:
    """A length mask one key short (`< seq_lens - 1`) or one long (`<= seq_lens`) keeps seq_lens ∓ 1 keys on
    each sequence's row; correct code's keeps seq_lens."""
    lengths = case.data["seq_lens"]
    return torch.cat([lengths - 1, lengths + 1]), lengths


def _whole_last_page(case: Case) -> tuple[Tensor, Tensor]:
    """A mask that keeps every slot of the sequence's pages keeps whole pages: ⌈seq_lens / page_size⌉ pages."""
    lengths, page_size = case.data["seq_lens"], case.data["k_pool"].shape[1]
    return -(-lengths // page_size) * page_size, lengths


HYPOTHESES = (
    Hypothesis("paged-tail-unmasked", "the last page is read whole: the stale slots after a sequence's last "
               "token are attended", "Attend to positions 0 … seq_lens[b] − 1 only: mask (or do not gather) the "
               "slots of the last page past the sequence's end.", lesson("paged-last-page"),
               _mistake({"span": "last-page"}, {"span": "table"}), tell=ValueTell(kept=_whole_last_page)),
    Hypothesis("paged-block-index", "the block table is indexed by the token's position instead of "
               "position // page_size", "Token t sits on logical page t // page_size, at slot t % page_size: "
               "block_table[b, t // page_size].", lesson("paged-address"), _mistake({"by_position": True})),
    Hypothesis("paged-length-off-by-one", "seq_lens read one off: the new token's own key missing, one stale "
               "token more, or the new token counted twice", "seq_lens already counts the new token, whose K and V "
               "are in the pool: attend to exactly seq_lens[b] positions.", lesson("paged-last-page"),
               _mistake({"extra": -1}, {"extra": 1}, {"duplicate_last": True}), tell=ValueTell(kept=_keys_one_off)),
    Hypothesis("paged-wrong-sequence", "the pages come from another sequence's row of the block table",
               "Sequence b reads block_table[b]: each row is one sequence's pages, in order.",
               lesson("paged-address"), _mistake({"rows": "first"}, {"rows": "rolled"})),
    Hypothesis("gqa-repeat", "query head h reads KV head h % G instead of h // (H / G): the heads expanded with "
               "repeat (tiled) instead of repeat_interleave, or a kernel's KV head index taken modulo G",
               "Query head h reads KV head h // (H/G): k.repeat_interleave(H // G, dim=1).",
               lesson("gqa-head-mapping"), _mistake({"head_map": "tile"})),
)

PROBLEM = FunctionProblem(HYPOTHESES, build, run, shrink)


def _sizes(heads: int = 4, kv_heads: int = 2, d: int = 8, page_size: int = 4) -> dict[str, int]:
    return {"heads": heads, "kv_heads": kv_heads, "d": d, "page_size": page_size}


def check_ragged(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(), {"lengths": (5, 9, 14)}, ctx.seed + 10)
    return "three sequences of 5, 9 and 14 tokens on pages of 4, the pool shuffled"


def check_exact_pages(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(), {"lengths": (8, 12, 1)}, ctx.seed + 20)
    return "lengths 8 and 12 fill their last page exactly; a sequence of one token"


def check_shared_prefix(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(page_size=3), {"lengths": (7, 10), "shared_pages": 2}, ctx.seed + 30)
    return "two sequences share their first two pages (prefix caching)"


def check_heads(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(heads=8, kv_heads=2), {"lengths": (6, 11)}, ctx.seed + 40)
    verify(ctx, PROBLEM, _sizes(heads=4, kv_heads=1), {"lengths": (6, 3)}, ctx.seed + 41)
    verify(ctx, PROBLEM, _sizes(heads=3, kv_heads=3), {"lengths": (5, 9)}, ctx.seed + 42)
    return "GQA (H=8, G=2), MQA (G=1) and MHA (G=H)"


def check_dtypes(ctx: CheckContext) -> str:
    for dtype, seed in ((torch.bfloat16, 50), (torch.float16, 51)):
        verify(ctx, PROBLEM, _sizes(page_size=16, d=16), {"lengths": (40, 17), "dtype": dtype}, ctx.seed + seed)
    return "bfloat16 and float16 pools with pages of 16 tokens"


def check_inputs_kept(ctx: CheckContext) -> str:
    """A decode step that scales q in place (q *= scale, as vLLM's test reference does on a view of its
    query) or writes into the pool returns the right output and corrupts the caller's tensors."""
    case = build(_sizes(), {"lengths": (5, 9)}, ctx.seed + 60)
    reply = ctx.call(ENTRY, *(case.data[name] for name in INPUTS), options={"return_inputs": True})
    expect_unchanged(reply, tuple((name, case.data[name]) for name in INPUTS), case.label,
                     "Scale a copy (scores = (q @ k.T) * scale), never the caller's tensors "
                     "(q *= scale, k_pool[...] = ...).")
    return "q, the pools, the block table and the lengths are as they were after the call"


USAGE = {
    "ragged": "continuous batching: sequences of different lengths decoded in one step (vLLM, TGI, SGLang)",
    "exact-pages": "a sequence whose last page is full, and one that has just started",
    "shared-prefix": "prefix caching and parallel sampling: one physical page in several block tables",
    "heads": "Llama-3 and Mistral (GQA), Falcon (MQA) and GPT-2-style MHA served from one paged pool",
    "dtypes": "serving in bfloat16 and float16 with vLLM's default page size of 16 tokens",
    "inputs": "a serving engine reuses q and the pools after the call: a decode step must not write into them",
}

SPEC = ExerciseSpec(
    name="paged-decode",
    title="A decode step over a paged KV cache (PagedAttention)",
    entry_points=(ENTRY,),
    lessons=("paged-last-page", "paged-address", "gqa-head-mapping"),
    forbidden=("sdpa",),
    checks=(
        Check("ragged", "ragged lengths over a shuffled pool", check_ragged),
        Check("exact-pages", "lengths that fill their last page exactly", check_exact_pages),
        Check("shared-prefix", "a prefix page shared by two sequences", check_shared_prefix),
        Check("heads", "GQA, MQA and MHA", check_heads),
        Check("dtypes", "bfloat16 and float16 pools", check_dtypes),
        Check("inputs", "the inputs are left as they were", check_inputs_kept),
    ),
    perf=perf_phase("paged-decode"),
)
