"""The flash exercise's memory verdict, from the worker's memory audit of one call at two block
sizes: the n×m scores held at once, or a per-block result kept for every block."""
from __future__ import annotations

import math
from typing import Any

from quizprep.grader.lessons import lesson
from quizprep.grader.op_lines import unread_in_call
from quizprep.grader.problem import Case
from quizprep.grader.spec import CheckFailure, Diagnosis


Audit = tuple[dict[str, Any], Case]  # the worker's memory report of one call, and its case
MATERIALISED = Diagnosis(
    "flash-materialised-scores", "the n×m score matrix is materialised: correct, but not FlashAttention",
    "Compute scores one key block at a time (q @ k_block.T), fold each into the running max, sum and output, "
    "and let it go before the next block.", lesson("flash-tiling-memory"))
# An honest call runs in one thread (torch computes with one here): the jail's other tasks use
# microseconds meanwhile, while n×m scores computed elsewhere take milliseconds.
OTHER_THREADS_CPU_NS = 1_000_000


def judge_memory(memory: dict[str, Any], case: Case, growth: tuple[Audit, Audit] | None = None,
                 resident_scores: int = 1) -> str:
    """The verdict on `case`'s audit; `growth` holds two audits of one case at a large and a small block.
    `memory["resident_growth_bytes"]`, where the grader could read it, is how far the process grew
    during the call, whatever allocated it: NumPy's arrays and a replaced audit show only there; it
    fails the call from `resident_scores` times the scores' bytes (a backward's correct files grow
    more than a forward's, with the blocks they allocate)."""
    n, m = case.sizes["n"], case.sizes["m"]
    full = _rows(case) * m * case.data["q"].element_size()
    why = lesson("flash-tiling-memory")
    memories = [memory, *(audit for audit, _ in growth or ())]  # every audited call's report
    if any(audit.get("mode_removed") for audit in memories):
        raise CheckFailure("the call removed the grader's memory audit, so its memory cannot be checked",
                           tried=case.label, hint="Leave torch's dispatch modes alone.")
    outside_torch = next((audit["host_copies"][0] for audit in memories if audit.get("host_copies")), None)
    if outside_torch:
        raise CheckFailure(f"the call read tensors out of torch ({outside_torch['call']}), where the grader's memory "
                           "audit cannot follow, so its memory cannot be checked", tried=case.label,
                           hint="Compute in torch from start to end: NumPy's arrays and Python's lists are outside "
                                "what the exercise measures (and off the GPU).")
    beside = _beside_the_call(memories)
    if beside:
        raise CheckFailure(f"{beside}, where the grader's memory audit cannot see (it watches only the thread "
                           "that calls you), so its memory cannot be checked", tried=case.label,
                           hint="Compute in the thread that calls you: start no threads.")
    held = [a for a in memory["largest"] if _score_shaped(a["shape"], n, m)]
    if held:
        shape = "×".join(map(str, held[0]["shape"]))
        reason = f"holds a {shape} tensor ({held[0]['op']}): all n×m = {n}×{m} scores at once"
    elif growth and (kept := _kept_per_block(*growth)):
        raise CheckFailure(f"the output is right, but {kept}", tried=case.label, named=Diagnosis(
            "flash-partials-kept", "every key block's partial result stays alive until the end: the extra "
            "memory grows with m / block_size, and at small blocks passes the n×m scores it was meant to avoid",
            "Fold each block into one running max, sum and output as you go, instead of collecting per-block "
            "results (a list, torch.stack) and combining them at the end.", why))
    elif memory["peak_live_bytes"] >= full:
        reason = (f"{memory['peak_live_bytes']:,} bytes were alive at once, at least the {full:,} bytes of the "
                  f"full n×m score matrix")
    elif (resident := memory.get("resident_growth_bytes")) is not None and resident >= full * resident_scores:
        times = "" if resident_scores == 1 else f"{resident_scores} times "
        reason = (f"made the process's memory grow by {resident:,} bytes (measured by the grader, whatever "
                  f"allocated it), at least {times}the {full:,} bytes of the full n×m score matrix")
    else:
        grown = "" if resident is None else f"; the process grew by {resident:,} bytes"
        return f"peak {memory['peak_live_bytes']:,} bytes alive at once, vs {full:,} for the full scores{grown}"
    raise CheckFailure(f"the output is right, but the call {reason}", tried=case.label, named=MATERIALISED)


def measured_outside(response: dict[str, Any], device: str) -> dict[str, Any]:
    """What the grader read from outside around an audited call (worker_session's CallWatch): what
    the audit, which lives in the learner's process, could be made to miss. On a CPU only: CUDA has
    threads and pages of its own."""
    return {**{key: response.get(key) if device == "cpu" else None for key in ("resident_growth_bytes", "other_threads")},
            "host_copies": response.get("host_copies") or []}


def _beside_the_call(memories: list[dict[str, Any]]) -> str:
    """What ran beside the calling thread during an audited call, as the grader measured it."""
    for threads in (memory.get("other_threads") or {} for memory in memories):
        if threads.get("running"):
            count = threads["running"]
            return f"{count} other thread{'s' if count > 1 else ''} of your file {'were' if count > 1 else 'was'} " \
                   "running when the call began"
        if (threads.get("cpu_ns") or 0) > OTHER_THREADS_CPU_NS:
            return f"other threads of your file used {threads['cpu_ns'] / 1e6:.1f} ms of CPU during the call"
    return ""


def _kept_per_block(large: Audit, small: Audit) -> str:
    """What grew when the block shrank, if it is at least half a partial output (n × d_v) per added block."""
    (memory, case), (small_memory, small_case) = large, small
    blocks = [math.ceil(c.sizes["m"] / c.sizes["block"]) for c in (case, small_case)]
    partial = _rows(case) * case.sizes["dv"] * case.data["q"].element_size()
    grown = small_memory["peak_live_bytes"] - memory["peak_live_bytes"]
    if grown < (blocks[1] - blocks[0]) * partial / 2:
        return ""
    return (f"its memory grows as the block shrinks: {small_memory['peak_live_bytes']:,} bytes alive at once with "
            f"block_size={small_case.sizes['block']} ({blocks[1]} blocks), {memory['peak_live_bytes']:,} with "
            f"block_size={case.sizes['block']} ({blocks[0]} blocks)")


def _score_shaped(shape: list[int], n: int, m: int) -> bool:
    """A shape with an n and an m in it: a score-sized tensor's."""
    return n in shape and m in _without(shape, n)


def _without(shape: list[int], size: int) -> list[int]:
    rest = list(shape)
    rest.remove(size)
    return rest


def _rows(case: Case) -> int:
    """Query rows over every batch-head: q is (..., n, d)."""
    return math.prod(case.data["q"].shape[:-1])


def judge_call(ctx: Any, request: dict[str, Any], response: dict[str, Any]) -> None:
    """Every call of flash's is audited (ExerciseSpec.every_call): one whose keys span more than a block
    and that holds all n×m scores fails, at whatever size. A file that tiled only at the memory check's
    size, or only while it saw the audit's slowdown, passed (eighth red team)."""
    q, k, v = request["args"][:3]
    n, m = q.shape[-2], k.shape[-2]
    block = request["kwargs"].get("block_size", 64)
    others = {*q.shape[:-2], q.shape[-1], v.shape[-1]}  # a shape holding one of these is not told apart
    # blocks of 1 make as many blocks as keys: kept per-block state is n×m too, named by the memory check
    if not isinstance(block, int) or block < 2 or m <= block or n in others or m in others:
        return
    heads = math.prod(q.shape[:-2])
    # (B, H, n, m) scores, or one head's (n, m): not (blocks, B, n, d_v) partials when m blocks of 1
    held = [a for a in response["memory"]["largest"] if _score_shaped(a["shape"], n, m)
            and heads % math.prod(_without(_without(a["shape"], n), m)) == 0]
    if held:
        shape = "×".join(map(str, held[0]["shape"]))
        raise CheckFailure(f"the output is right, but the call holds a {shape} tensor ({held[0]['op']}): all "
                           f"n×m = {n}×{m} scores at once, with block_size={block}",
                           tried=f"q {tuple(q.shape)}, k {tuple(k.shape)}, block_size={block}", named=MATERIALISED,
                           where=unread_in_call(ctx, request, MATERIALISED.id))
