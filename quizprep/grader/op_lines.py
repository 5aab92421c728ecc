"""The learner's own line for a named mistake: the op family each mistake shows in, and the one
replay that finds where the learner's file issues that op.

A family is data: the ops a mistake lives in, the kinds of their operand or result ("half2": a
16-bit matrix), which of them (the first, or the last, in the order the learner's code first issued
them) carries it, and the ops its line must also issue where one op alone could sit on another
line than the mistake. A diagnosis whose family picks no line is looked for by its values where its
hypothesis has a tell (value_lines.py: the family, if any, names the op, the values its line), and
for a family whose mistake is an op left out, in the learner's source: the one mask statement that
never ran (learner_source.py); for a mistake that is an argument left unread, the parameter's own
line, where the one function that takes it never reads it (learner_source.py). Otherwise no line is
quoted: no line is better than a wrong one. The recording only picks a line to show; the verdict is
made before it, from the values.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from quizprep.grader.bounds import cut, printable
from quizprep.grader.learner_source import index_makers, unread_parameter, unrun_call
from quizprep.grader.value_lines import ValueTell, told_line

if TYPE_CHECKING:
    from torch import Tensor

    from quizprep.grader.context import CheckContext
    from quizprep.grader.problem import Case, Problem

CODE_SHOWN = 120  # characters of the learner's line in the report


@dataclass(frozen=True)
class OpFamily:
    ops: frozenset[str]  # empty: any op, the kinds below alone pick it
    last: bool = False  # the mistake is in the last such op (a merge of heads), not the first
    operands: frozenset[str] = frozenset()  # the first operand's kinds, when the name alone is ambiguous
    results: frozenset[str] = frozenset()  # the result's kinds: the line where a value is first produced
    beside: frozenset[str] = frozenset()  # ops the chosen line must also issue, or no line is quoted
    # ops quoted only from the one line that issues them: where several lines do (the queries' and
    # the keys' positions), which one the mistake is in is not known, and no line is quoted
    sole: frozenset[str] = frozenset()
    # the mistake may be an op that never ran (a mask under a condition that never held): where none
    # of the family ran, the one statement of the learner's that calls one and never ran is quoted
    unrun: bool = False

    def pick(self, recorded: list[dict[str, Any]]) -> dict[str, Any] | None:
        found = [op for op in recorded if self.holds(op)]
        chosen = (found[-1] if self.last else found[0]) if found else None
        if chosen is None:
            return None
        if chosen["op"] in self.sole and len({op["line"] for op in recorded if op["op"] == chosen["op"]}) > 1:
            return None
        if not self.beside:
            return chosen
        on_its_line = {op["op"] for op in recorded if op["line"] == chosen["line"]}
        return chosen if on_its_line & self.beside else None

    def holds(self, op: dict[str, Any]) -> bool:
        """`op` is one of the family's."""
        return ((not self.ops or op["op"] in self.ops)
                and (not self.operands or op.get("operand") in self.operands)
                and (not self.results or op.get("result") in self.results))


def _family(*ops: str, last: bool = False, operands: tuple[str, ...] = (), results: tuple[str, ...] = (),
            beside: tuple[str, ...] = (), sole: tuple[str, ...] = (), unrun: bool = False) -> OpFamily:
    return OpFamily(frozenset(ops), last, frozenset(operands), frozenset(results), frozenset(beside),
                    frozenset(sole), unrun)


SCORES = _family("matmul", "bmm", "einsum", "baddbmm")
SOFTMAX = _family("softmax", "log_softmax", "amax", "max", "logsumexp", "exp", "sum")
MASK_APPLIED = _family("masked_fill", "where")
# a mask left out: applied on a line that never ran, or nowhere (then no line)
MASK_NOT_APPLIED = _family("masked_fill", "where", unrun=True)
MASK_AFTER_SOFTMAX = _family("mul", "masked_fill", "where", last=True)
MASK_BUILT = _family("tril", "triu", "lt", "le", "gt", "ge")
# the diagonal's offset, or the query positions it comes from: an arange only where one line makes
# positions (a kernel may build its key offsets before its query offsets)
MASK_OFFSET = _family("tril", "triu", "arange", sole=("arange",))
WINDOW_BUILT = _family("tril", "triu", "lt", "le", "gt", "ge", "abs")
HEAD_SPLIT = _family("view", "reshape", "unflatten")
HEAD_MERGE = _family("view", "reshape", "flatten", last=True)
KV_HEADS = _family("repeat", "repeat_interleave", "expand", "tile")
# the power that makes the frequencies, on the line that counts their exponents: an arange elsewhere
# (a feature permutation, the positions) is no frequency, and an exponent built on another line may be it
ROPE_FREQUENCIES = _family("pow", "rpow", "exp", "exp2", beside=("arange",))
# P recomputed on the scores' own line: where S is scaled (or lse taken off) a line above, either line
# may hold the mistake
PROBABILITIES = _family("exp", "exp2", "softmax", beside=("matmul", "bmm", "einsum", "baddbmm"))
CACHE_JOIN = _family("cat")
BLOCK_TABLE = _family("getitem", "index_select", "gather", operands=("int2",))
# RoPE's angles, or the positions they come from, first held in 16 bits (x itself is 4-D)
HALF_ANGLES = _family(results=("half1", "half2"))
# sin's sign flipped on the table (n × r/2 or n × r) where sin is taken; never rotate_half's own −x2,
# even on a head looped down to 2-D
SIN_NEGATED = _family("neg", operands=("float2", "half2"), beside=("sin",))
# the grouped (…, G, m, d) gradients reduced by anything but a sum over G
GROUP_NOT_SUMMED = _family("getitem", "select", "narrow", "mean", "amax", "max", "squeeze",
                           operands=("float5", "half5"))
# the first line that reads a sequence's length, quoted only where it also makes the positions
LENGTH_TO_POSITIONS = _family(operands=("int0", "int1"), beside=("arange",))

FAMILIES: dict[str, OpFamily] = {
    **dict.fromkeys(("no-scale", "scale-dk", "scale-dv", "scale-d-model", "scale-seq-len"), SCORES),
    **dict.fromkeys(("softmax-axis", "global-max", "max-over-last-axis", "no-keepdim", "dim-ignored",
                     "no-max-shift", "softmax-all-axes"), SOFTMAX),
    **dict.fromkeys(("mask-inverted", "mask-zero-fill"), MASK_APPLIED),
    **dict.fromkeys(("mask-ignored", "backward-causal-unmasked"), MASK_NOT_APPLIED),
    "mask-after-softmax": MASK_AFTER_SOFTMAX,
    **dict.fromkeys(("causal-no-offset", "kv-mask-no-offset", "window-no-offset"), MASK_OFFSET),
    **dict.fromkeys(("window-narrow", "window-wide", "window-two-sided"), WINDOW_BUILT),
    **dict.fromkeys(("causal-inverted", "causal-no-diagonal", "kv-no-diagonal", "causal-upper",
                     "padding-inverted", "padding-off-by-one"), MASK_BUILT),
    **dict.fromkeys(("split-no-transpose", "split-interleaved"), HEAD_SPLIT),
    **dict.fromkeys(("merge-no-transpose", "merge-interleaved"), HEAD_MERGE),
    "gqa-repeat": KV_HEADS,
    "rope-frequency-exponent": ROPE_FREQUENCIES,
    "rope-angles-low-precision": HALF_ANGLES,
    "rope-rotation-reversed": SIN_NEGATED,
    "backward-gqa-not-summed": GROUP_NOT_SUMMED,
    **dict.fromkeys(("paged-tail-unmasked", "paged-length-off-by-one"), LENGTH_TO_POSITIONS),
    **dict.fromkeys(("backward-p-no-lse", "backward-p-unscaled"), PROBABILITIES),
    "kv-prepended": CACHE_JOIN,
    **dict.fromkeys(("paged-block-index", "paged-wrong-sequence"), BLOCK_TABLE),
}

# a mistake that is an argument's effect left out: the contract's names for that argument
UNREAD: dict[str, tuple[str, ...]] = {
    "mask-ignored": ("mask", "causal"),
    "backward-causal-unmasked": ("causal",),
    "kv-ignored": ("key",),
    "no-output-projection": ("W_o",),
    "dim-ignored": ("dim",),
    "rope-offset-ignored": ("positions",),
    "rope-partial-ignored": ("rotary_dim",),
    "rope-layout-swapped": ("layout",),
    "online-whole-row": ("chunk_size",),
    **dict.fromkeys(("flash-materialised-scores", "backward-materialised-scores"), ("block_size",)),
}


def learner_line(ctx: CheckContext, problem: Problem, case: Case, diagnosis_id: str,
                 options: dict[str, Any] | None, failing: Case | None = None, seed: int = 0) -> str:
    """"Your line: file.py:N: <code>" for the mistake `diagnosis_id`: from one replay of `case` with
    the worker recording ops, where its family is known; else, where its hypothesis has a value tell,
    from one replay of `failing` (or a case of the tell's sizes) sampling their results
    (value_lines.py); else, for an argument left unread, that parameter's line (learner_source.py);
    "" when none finds a line of the learner's."""
    family = FAMILIES.get(diagnosis_id)
    replay = _replay(ctx, problem, case, options, values=False) if family is not None else None
    chosen = family.pick(replay[0]) if family is not None and replay is not None else None
    if chosen is None and family is not None and family.unrun and replay is not None:
        chosen = _unrun(ctx, family, replay[0])
    tell = next((h.tell for h in problem.hypotheses if h.id == diagnosis_id and h.tell is not None), None)
    if chosen is None and tell is not None and failing is not None:
        chosen = _told(ctx, problem, tell, failing, seed, options, family)
    if chosen is None and diagnosis_id in UNREAD:
        replay = replay if family is not None else _replay(ctx, problem, case, options, values=False)
        chosen = _unread(ctx, diagnosis_id, replay)
    return quoted(ctx, chosen)


def unread_line(ctx: CheckContext, problem: Problem, case: Case, diagnosis_id: str) -> str:
    """"Your line: …" for a mistake named without a replay (a memory verdict) where it is an argument
    left unread: the parameter's own line, from one replay of `case` recording ops (a case of a few
    key blocks: the audit's many would pass the recorder's cap); "" otherwise."""
    if diagnosis_id not in UNREAD:
        return ""
    return quoted(ctx, _unread(ctx, diagnosis_id, _replay(ctx, problem, case, None, values=False)))


def unread_in_call(ctx: CheckContext, request: dict[str, Any], diagnosis_id: str) -> str:
    """unread_line for a call judged as its reply came back (ExerciseSpec.every_call), which has no
    case to replay: the same request once more, recording ops."""
    if diagnosis_id not in UNREAD:
        return ""
    replay = {**request, "memory_audit": False, "record_ops": True, "record_values": False}
    try:
        recorded = ctx.session.request(replay).get("ops") or []
    except Exception:  # noqa: BLE001 - the verdict is made; a replay that fails only loses the line
        return ""
    return quoted(ctx, unread_parameter(Path(ctx.session.path), UNREAD[diagnosis_id], recorded))


def _unread(ctx: CheckContext, diagnosis_id: str,
            replay: tuple[list[dict[str, Any]], dict[str, Tensor]] | None) -> dict[str, Any] | None:
    return unread_parameter(Path(ctx.session.path), UNREAD[diagnosis_id], replay[0]) if replay else None


def quoted(ctx: CheckContext, chosen: dict[str, Any] | None) -> str:
    """"Your line: file.py:N: code" for `chosen` ({"line", "code"}, with "function" and "parameter" for
    an argument left unread); "" for None."""
    if chosen is None:
        return ""
    code = cut(printable(chosen["code"], one_line=True), CODE_SHOWN)
    if "parameter" in chosen:
        code += printable(f"  ({chosen['function']} never reads {chosen['parameter']})", one_line=True)
    return f"Your line: {Path(ctx.session.path).name}:{chosen['line']}: {code}"


def _unrun(ctx: CheckContext, family: OpFamily, recorded: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The statement of the learner's that would issue the family's op and never ran, where none ran."""
    if any(family.holds(op) for op in recorded):
        return None
    return unrun_call(Path(ctx.session.path), family.ops, recorded)


def _replay(ctx: CheckContext, problem: Problem, case: Case, options: dict[str, Any] | None,
            values: bool) -> tuple[list[dict[str, Any]], dict[str, Tensor]] | None:
    """The ops the learner's file issued on `case` (with their results' samples if `values`) and its
    outputs; None when the replay fails."""
    try:
        ctx.recorded_ops = []
        outputs = problem.run(ctx, case, {**(options or {}), "record_ops": True, "record_values": values})
    except Exception:  # noqa: BLE001 - the verdict is made; a replay that fails only loses the line
        return None
    return ctx.recorded_ops, outputs


def _told(ctx: CheckContext, problem: Problem, tell: ValueTell, failing: Case, seed: int,
          options: dict[str, Any] | None, family: OpFamily | None) -> dict[str, Any] | None:
    """The op value_lines.py finds on a replay of `failing`, or of a case of the tell's sizes, where
    `family`'s ops, if known, may be told apart by their values."""
    sizes = tell.sizes(failing.sizes)
    try:
        told = failing if sizes == failing.sizes else problem.build(sizes, failing.variant, seed)
    except Exception:  # noqa: BLE001 - sizes the generator refuses only lose the line
        return None
    replay = _replay(ctx, problem, told, options, values=True)
    if replay is None:
        return None
    return told_line(tell, told, replay[1], replay[0], _position_maker(ctx, family))


def _position_maker(ctx: CheckContext, family: OpFamily | None) -> Callable[[dict[str, Any]], bool] | None:
    """Whether an op is one of `family`'s on a line whose result no tensor is indexed with: an index
    (a query block's rows read from q) is what positions are made from, so the offset a mistake left
    out may belong to the comparison that uses it, not to its line."""
    if family is None:
        return None
    indexes_tensors = index_makers(Path(ctx.session.path))
    return lambda op: family.holds(op) and not indexes_tensors(op["line"])
