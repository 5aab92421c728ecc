"""The value locator: the worker's samples of a result, and the grader's choice of the first line whose
sample holds a mistake's telltale values and not only correct ones (value_lines.py)."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from quizprep.grader.exercises import attention_backward, paged_decode, rope
from quizprep.grader.learner_side import op_recorder, protocol
from quizprep.grader.learner_side.op_recorder import SAMPLE_SIZE, value_sample
from quizprep.grader.value_lines import among, told_line

F64 = torch.float64


def op(line: int, value: torch.Tensor, kind: str = "float4") -> dict:
    return {"op": "mul", "result": kind, "line": line, "code": f"line {line}", **value_sample(value)}


def backward_case(**variant):
    sizes = {"batch": 1, "heads": 2, "kv_heads": 2, "n": 5, "m": 5, "d": 4, "block": 0}
    return attention_backward.build(sizes, variant, seed=3)


def hypothesis_tell(module, diagnosis_id: str):
    return next(h.tell for h in module.HYPOTHESES if h.id == diagnosis_id)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(1, 40), st.integers(0, 2**16))
def test_a_sample_holds_only_the_tensors_own_values_whatever_its_layout(rows: int, cols: int, seed: int):
    value = torch.randn(rows, cols, generator=torch.Generator().manual_seed(seed))
    for layout in (value, value.t(), value.expand(3, rows, cols), value.repeat(1, 2), value[:, :1]):
        sample = torch.tensor(value_sample(layout)["sample"], dtype=F64)
        assert len(sample) == SAMPLE_SIZE
        assert among(sample, value.double().flatten().sort().values, 0.0)


def test_a_sample_takes_the_least_and_largest_finite_values_and_a_masks_counts_per_row():
    value = torch.tensor([[float("-inf"), 3.0], [-2.0, float("nan")]])
    sample = value_sample(value)
    assert sample["shape"] == [2, 2] and min(sample["sample"]) == -2.0 and max(sample["sample"]) == 3.0
    assert value_sample(2.0) == {} and value_sample(torch.tensor(True)) == {}
    mask = torch.arange(6)[None, :] < torch.tensor([1, 4, 6])[:, None]
    kept = value_sample(mask)
    assert "sample" not in kept and sorted(set(kept["kept"])) == [1.0, 4.0, 6.0] and len(kept["kept"]) == SAMPLE_SIZE


def learner_file(tmp_path, source: str) -> tuple[str, dict]:
    """The path of a learner's file made of `source`, and its functions."""
    learner = str(tmp_path / "work.py")
    namespace: dict = {}
    exec(compile(source, learner, "exec"), namespace)
    return learner, namespace


def test_a_replay_sorts_a_bounded_number_of_elements_for_its_samples(tmp_path, monkeypatch):
    learner, namespace = learner_file(tmp_path, "def steps(x):\n"
                                                "    y = x * 2\n"
                                                "    return y + 1\n")
    monkeypatch.setattr(op_recorder, "SAMPLED_NUMEL", 12)
    recorder = op_recorder.OpRecorder(learner, values=True)
    with recorder:
        namespace["steps"](torch.arange(9.0).reshape(3, 3))
    sampled = {entry["line"]: "sample" in entry for entry in recorder.entries()}
    assert sampled == {2: True, 3: False}
    plain = op_recorder.OpRecorder(learner)  # a replay for op families only samples nothing
    with plain:
        namespace["steps"](torch.arange(9.0).reshape(3, 3))
    assert plain.entries() and all("sample" not in entry for entry in plain.entries())


def test_among_holds_within_the_tolerance_only():
    values = torch.tensor([0.0, 1.0, 2.5], dtype=F64)
    assert among(torch.tensor([1.0 + 1e-7, 2.5], dtype=F64), values, 1e-6)
    assert not among(torch.tensor([1.0, 1.7], dtype=F64), values, 1e-6)
    assert not among(torch.tensor([1.0], dtype=F64), torch.empty(0, dtype=F64), 1.0)


def test_the_first_line_holding_the_telltale_is_quoted():
    """dP = dO Vᵀ and P are the same with and without D: the line after them, P ∘ dP, is the mistake's."""
    case = backward_case()
    tell = hypothesis_tell(attention_backward, "backward-no-delta")
    mistaken = attention_backward.recurrence(case, delta=False)
    d_p = case.data["d_o"].double() @ case.data["v"].double().transpose(-2, -1)
    outputs = attention_backward.simulate(case, delta=False)
    ops = [op(3, d_p.float()), op(4, mistaken["p"].float()), op(5, mistaken["ds"].float())]
    assert told_line(tell, case, outputs, ops)["line"] == 5
    assert told_line(tell, case, outputs, ops[:2]) is None
    assert told_line(tell, case, dict(case.expected), ops) is None  # no output wrong: nothing to tell


def test_a_line_whose_value_is_the_same_with_and_without_the_mistake_is_never_quoted():
    """Positions 3..12 rotated as 0..9: the table's rows 3..9 are the same either way, so a line holding
    only them is no evidence; the rows from 0 are."""
    sizes = {"batch": 1, "heads": 1, "tokens": 10, "d": 8, "rotary": 8, "offset": 3, "stride": 1}
    case = rope.build(sizes, {"layout": "half"}, seed=4)
    tell = hypothesis_tell(rope, "rope-offset-ignored")
    outputs = rope.simulate(case, from_zero=True)
    angles = torch.arange(10).double()[:, None] * rope.inverse_frequencies(8, 10000.0)
    shared, from_zero = op(5, angles[3:].float(), "float2"), op(6, angles.float(), "float2")
    assert told_line(tell, case, outputs, [shared]) is None
    assert told_line(tell, case, outputs, [shared, from_zero])["line"] == 6


def test_a_telltale_counts_only_for_the_outputs_the_learner_got_wrong():
    """Only dK lacks its scale: the unscaled dQ that code holds before its own `* scale` is no mistake."""
    case = backward_case()
    tell = hypothesis_tell(attention_backward, "backward-scale-missing")
    unscaled = attention_backward.recurrence(case, dq_scale=False, dk_scale=False)
    outputs = attention_backward.simulate(case, dk_scale=False)
    ops = [op(7, unscaled["dq"].float()), op(8, unscaled["dk"].float())]
    assert told_line(tell, case, outputs, ops)["line"] == 8


def test_whole_numbers_match_only_whole_number_telltales():
    """An arange of features can coincide with a row of the angle table (position · θ_0 = position):
    only positions from 0, longer than the head, are the mistake's."""
    sizes = {"batch": 1, "heads": 1, "tokens": 10, "d": 8, "rotary": 8, "offset": 21, "stride": 1}
    case = rope.build(sizes, {"layout": "half"}, seed=5)
    tell = hypothesis_tell(rope, "rope-offset-ignored")
    outputs = rope.simulate(case, from_zero=True)
    features, from_zero = torch.arange(0, 8, 2).float(), torch.arange(10)
    angles = from_zero.double()[:, None] * rope.inverse_frequencies(8, 10000.0)
    assert told_line(tell, case, outputs, [op(2, features, "float1"), op(3, from_zero, "int1")])["line"] == 3
    assert told_line(tell, case, outputs, [op(2, features, "float1"), op(4, angles.float(), "float2")])["line"] == 4


def test_a_line_computed_from_an_untold_culprit_is_not_quoted():
    """gpt-neox's arange(seq_len) after 3 cached tokens: positions 0..9 are also features 0..7 and true
    positions 3..12, so the arange cannot be told from correct code; the angle table computed from it
    can, but quoting it would point below the mistake: no line."""
    sizes = {"batch": 1, "heads": 1, "tokens": 10, "d": 8, "rotary": 8, "offset": 3, "stride": 1}
    case = rope.build(sizes, {"layout": "half"}, seed=4)
    tell = hypothesis_tell(rope, "rope-offset-ignored")
    outputs = rope.simulate(case, from_zero=True)
    from_zero = torch.arange(10)
    angles = from_zero.double()[:, None] * rope.inverse_frequencies(8, 10000.0)
    features = torch.arange(0, 8, 2)  # a feature permutation before it spans no positions: no reason to stop
    ops = [op(2, features, "int1"), op(3, from_zero, "int1"), op(4, angles.float(), "float2")]
    assert told_line(tell, case, outputs, ops) is None
    assert told_line(tell, case, outputs, [ops[0], ops[2]])["line"] == 4


def test_positions_from_zero_are_replayed_apart_from_the_true_ones():
    """The tell's replay puts the cache past the new tokens, so an arange from 0 holds positions that no
    correct line holds, and it is the line quoted."""
    tell = hypothesis_tell(rope, "rope-offset-ignored")
    sizes = tell.sizes({"batch": 1, "heads": 1, "tokens": 7, "d": 8, "rotary": 8, "offset": 3, "stride": 1})
    case = rope.build(sizes, {"layout": "half"}, seed=4)
    tokens = sizes["tokens"]
    assert sizes["offset"] >= tokens > sizes["d"]
    from_zero = torch.arange(tokens)
    angles = from_zero.double()[:, None] * rope.inverse_frequencies(8, 10000.0)
    outputs = rope.simulate(case, from_zero=True)
    assert told_line(tell, case, outputs, [op(3, from_zero, "int1"), op(4, angles.float(), "float2")])["line"] == 3


def test_an_untold_op_of_the_mistakes_family_is_quoted_where_its_values_single_it_out():
    """FlashAttention-2's loops make the keys' positions on one line and the queries' on another, both
    aranges: top-left queries at 0..n-1 are also query indices, so no value tells them from correct
    code's, but only the queries' line holds them; where a key block holds them too, neither is quoted."""
    case = attention_backward.build({"batch": 1, "heads": 1, "kv_heads": 1, "n": 4, "m": 9, "d": 4, "block": 0},
                                    {"causal": True}, seed=3)
    tell = hypothesis_tell(attention_backward, "causal-no-offset")
    outputs = attention_backward.simulate(case, offset_sign=0)

    def arange(line: int, start: int, stop: int) -> dict:
        return {**op(line, torch.arange(start, stop), "int1"), "op": "arange"}

    def owned(recorded: dict) -> bool:
        return recorded["op"] == "arange"

    queries_then_keys = [arange(29, 0, 4), arange(30, 0, 9)]
    assert told_line(tell, case, outputs, queries_then_keys) is None
    assert told_line(tell, case, outputs, queries_then_keys, owned)["line"] == 29
    assert told_line(tell, case, outputs, [arange(30, 0, 9), arange(29, 0, 4)], owned)["line"] == 29
    assert told_line(tell, case, outputs, [arange(29, 0, 4), arange(30, 0, 4)], owned) is None
    assert told_line(tell, case, outputs, queries_then_keys, lambda recorded: False) is None


@pytest.mark.parametrize("key", ["sample", "kept"])
@pytest.mark.parametrize("sample", [["1.0"], [True], 3.0])
def test_forged_samples_in_a_reply_are_refused(sample, key: str):
    with pytest.raises(protocol.ProtocolError):
        protocol.checked_reply({"ok": True, "ops": [{"op": "mul", "line": 1, key: sample}]})


def test_a_replys_sample_and_shape_are_capped():
    reply = protocol.checked_reply({"ok": True, "ops": [{"op": "mul", "line": 1, "sample": [0.5] * 10_000,
                                                        "kept": [3.0] * 10_000, "shape": [2] * 10_000}]})
    assert len(reply["ops"][0]["sample"]) == len(reply["ops"][0]["kept"]) == protocol.SAMPLE_KEPT == SAMPLE_SIZE
    assert len(reply["ops"][0]["shape"]) <= protocol.SAMPLE_KEPT


def test_a_reversed_rotate_half_is_told_by_its_negated_first_half_never_by_a_negated_sin():
    """cat(x2, −x1) negates the pairs' first features, which correct rotate_half (−x2) never does; a sin
    table's flipped sign negates no feature, so the line using it, below the mistake, is not quoted."""
    sizes = {"batch": 1, "heads": 2, "tokens": 5, "d": 8, "rotary": 8, "offset": 3, "stride": 1}
    case = rope.build(sizes, {"layout": "half"}, seed=6)
    tell = hypothesis_tell(rope, "rope-rotation-reversed")
    outputs = rope.simulate(case, sign=-1.0)
    x = case.data["x"]
    first, second = x[..., :4], x[..., 4:]
    rotate_half = [op(3, first), {**op(4, -first), "code": "return torch.cat((x2, -x1), dim=-1)"}]
    assert told_line(tell, case, outputs, rotate_half)["line"] == 4
    assert told_line(tell, case, outputs, [op(3, first), op(4, -second)]) is None
    flipped_sin = -rope.tables(case, case.data["positions"])[2].float()
    assert told_line(tell, case, outputs, [op(5, flipped_sin, "float2"), op(6, first * flipped_sin[:, :4])]) is None


def test_a_reversed_formula_is_quoted_where_it_is_written_only_under_tables_named_for_what_they_hold():
    """a·cos + b·sin is the reversed rotation's own line where `sin` holds the sines; where `sin` holds
    them negated (a sign flipped on a line above) or the tables are complex, the line only passes it on."""
    sizes = {"batch": 1, "heads": 2, "tokens": 5, "d": 8, "rotary": 8, "offset": 3, "stride": 1}
    case = rope.build(sizes, {"layout": "half"}, seed=6)
    tell = hypothesis_tell(rope, "rope-rotation-reversed")
    outputs = rope.simulate(case, sign=-1.0)
    _, cos, sin = (table.float() for table in rope.tables(case, case.data["positions"]))
    turned = {**op(7, outputs["out"][..., :4].float()), "code": "first = a * cos + b * sin"}
    tables = [bound(3, "cos", cos), op(4, case.data["x"][..., :4]), bound(4, "a", case.data["x"][..., :4])]
    assert told_line(tell, case, outputs, [*tables, bound(3, "sin", sin), turned])["line"] == 7
    assert told_line(tell, case, outputs, [*tables, bound(3, "sin", -sin), turned]) is None
    unsampled = {"op": op_recorder.BOUND, "name": "sin", "result": "float2", "line": 3, "code": ""}
    assert told_line(tell, case, outputs, [*tables, unsampled, turned]) is None


def test_a_length_mask_is_told_by_how_many_keys_each_row_keeps():
    """`< seq_lens - 1` or `<= seq_lens` keeps a key too few or too many per sequence, a mask over whole
    pages keeps ⌈seq_lens / page_size⌉ pages: the mask's line is quoted, not the gather before it (stale
    pages and all) nor a `seq_lens - 1` a correct line makes."""
    sizes = {"heads": 4, "kv_heads": 2, "d": 8, "page_size": 4}
    case = paged_decode.build(sizes, {"lengths": (5, 9, 14)}, seed=7)
    tell = hypothesis_tell(paged_decode, "paged-length-off-by-one")
    outputs = paged_decode.simulate(case, extra=1)
    lengths, slots = case.data["seq_lens"], case.data["block_table"].shape[1] * 4
    gathered = op(2, case.data["k_pool"][case.data["block_table"].flatten()], "float4")
    last_index = op(3, lengths - 1, "int1")

    def mask(line: int, keep: torch.Tensor) -> dict:
        kept = torch.arange(slots)[None, :] < keep[:, None]
        return {"op": "le", "result": "int2", "line": line, **value_sample(kept)}

    assert told_line(tell, case, outputs, [gathered, last_index, mask(4, lengths + 1)])["line"] == 4
    assert told_line(tell, case, outputs, [gathered, mask(4, lengths - 1)])["line"] == 4
    assert told_line(tell, case, outputs, [gathered, last_index, mask(4, lengths)]) is None
    assert told_line(tell, case, dict(case.expected), [mask(4, lengths + 1)]) is None
    whole_pages = hypothesis_tell(paged_decode, "paged-tail-unmasked")
    unmasked = paged_decode.simulate(case, span="last-page")
    assert told_line(whole_pages, case, unmasked, [gathered, mask(5, -(-lengths // 4) * 4)])["line"] == 5
    assert told_line(whole_pages, case, unmasked, [gathered, mask(5, lengths)]) is None


def test_positions_held_in_bfloat16_are_told_by_their_rounding():
    """Positions cast to x.dtype and straight back to float32 (rotary-embedding-torch's get_seq_pos): 32,767
    is 32,768 in bfloat16, a whole number no true position is; the true positions and the float32 angles
    computed from them before it are not the mistake."""
    sizes = {"batch": 1, "heads": 2, "tokens": 64, "d": 16, "rotary": 16, "offset": 32768 - 64 * 509, "stride": 509}
    case = rope.build(sizes, {"layout": "half", "dtype": torch.bfloat16}, seed=8)
    tell = hypothesis_tell(rope, "rope-angles-low-precision")
    outputs = rope.simulate(case, angle_dtype=torch.bfloat16, round_angles=False)
    positions = case.data["positions"]
    angles = rope.tables(case, positions)[0].float()
    rounded = positions.to(torch.bfloat16)
    ops = [op(2, positions[None], "int2"), op(3, angles, "float2"), op(4, rounded, "half1")]
    assert told_line(tell, case, outputs, ops)["line"] == 4
    assert told_line(tell, case, outputs, ops[:2]) is None


def test_a_replay_notes_the_tensors_each_line_binds_and_each_product_of_a_line_apart(tmp_path):
    """A parameter is bound by the learner's line that called; `(q * s) + (r * c)` samples both products."""
    learner, namespace = learner_file(tmp_path, "def turn(q, s, c):\n"
                                                "    return (q * s) + (q.flip(-1) * c)\n"
                                                "def apply(x):\n"
                                                "    sin, cos = x.cos(), x.sin()\n"
                                                "    return turn(x, sin, cos)\n")
    recorder = op_recorder.OpRecorder(learner, values=True)
    with recorder:
        namespace["apply"](torch.linspace(0.1, 1.0, 6))
    entries = recorder.entries()
    bound = {(entry["line"], entry["name"]) for entry in entries if entry["op"] == op_recorder.BOUND}
    assert bound == {(4, "sin"), (4, "cos"), (5, "q"), (5, "s"), (5, "c")}
    cos_made = next(entry for entry in entries if entry["op"] == "cos")
    assert next(entry for entry in entries if entry["name"] == "sin")["sample"] == cos_made["sample"]
    assert sum(entry["op"] == "mul" and entry["line"] == 2 for entry in entries) == 2
    assert all(entry["line"] in (2, 4, 5) for entry in entries)  # the samples' own ops are no learner's
    plain = op_recorder.OpRecorder(learner)  # a replay for op families binds nothing
    with plain:
        namespace["apply"](torch.linspace(0.1, 1.0, 6))
    assert not any(entry["op"] == op_recorder.BOUND for entry in plain.entries())


def swapped_rope_case():
    sizes = {"batch": 1, "heads": 2, "tokens": 6, "d": 8, "rotary": 8, "offset": 3, "stride": 1}
    case = rope.build(sizes, {"layout": "half"}, seed=9)
    x = case.data["x"]
    _, cos, sin = (table.float() for table in rope.tables(case, case.data["positions"]))
    rotate_half = torch.cat([-x[..., 4:], x[..., :4]], -1)
    return case, rope.simulate(case, swap=True), x, cos.repeat(1, 2), sin.repeat(1, 2), rotate_half


def bound(line: int, name: str, value: torch.Tensor) -> dict:
    return {"op": op_recorder.BOUND, "name": name, "result": "float2", "line": line, "code": "", **value_sample(value)}


def test_sin_and_cos_swapped_where_the_tables_are_made_is_told_by_their_names():
    """`sin, cos = angles.cos(), angles.sin()` binds `sin` to the cosines on the line that made them; a
    name bound to a table a line elsewhere returned (`cos, sin = tables(...)`) may only pass the swap on."""
    case, outputs, x, cos, sin = swapped_rope_case()[:5]
    tell = hypothesis_tell(rope, "rope-sin-cos-swapped")
    made = [op(3, cos, "float2"), op(3, sin, "float2"), bound(3, "sin", cos), bound(3, "cos", sin)]
    uses = [op(5, x * sin), op(5, x * cos)]
    assert told_line(tell, case, outputs, made + uses)["line"] == 3
    assert told_line(tell, case, outputs, [op(2, cos, "float2"), bound(4, "sin", cos), *uses]) is None
    assert told_line(tell, case, outputs, [*made[:2], bound(3, "cos", cos), bound(3, "sin", sin), *uses]) is None


def test_sin_and_cos_swapped_where_they_are_used_is_quoted_only_where_the_names_read_say_what_they_hold():
    """rotate_half(q) · cos makes −b·cos: the line is the swap's where the tables it reads are named for
    what they hold, and may be computing from tables swapped a line above where they are `c` and `s`."""
    case, outputs, x, cos, sin, rotate_half = swapped_rope_case()
    tell = hypothesis_tell(rope, "rope-sin-cos-swapped")
    named = [bound(2, "cos", cos), bound(2, "sin", sin), bound(4, "q", x)]
    used = {**op(6, rotate_half * cos), "code": "return (q * sin) + (rotate_half(q) * cos)"}
    assert told_line(tell, case, outputs, [*named, used])["line"] == 6
    unnamed = [bound(2, "c", cos), bound(2, "s", sin), bound(4, "q", x)]
    used_unnamed = {**used, "code": "return (q * s) + (rotate_half(q) * c)"}
    assert told_line(tell, case, outputs, [*unnamed, used_unnamed]) is None
    assert told_line(tell, case, outputs, [*named, {**used, "code": "return (q * sin) + ("}]) is None
