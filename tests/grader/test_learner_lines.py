"""A named mistake quotes the learner's own line: the one a mutant marks with a `# BUG` comment
(read by these tests only; the grader finds the line from the ops its code issued), or none."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import HERE, expectation
from style_mutants import STYLE_MUTANTS, write_style_mutants
from quizprep.grader import exercism
from quizprep.grader.learner_side import protocol
from quizprep.grader.op_lines import FAMILIES, OpFamily

MUTANTS = HERE / "mutants"
QUOTED = re.compile(r"Your line: (?P<file>[^:]+):(?P<line>\d+): (?P<code>.*)")
# one mutant or more per exercise and per family of ops
QUOTING = ("attention_no_scale", "attention_softmax_axis", "attention_mask_inverted", "attention_mask_after_softmax",
           "mha_split_no_transpose", "mha_merge_no_transpose", "gqa_repeat", "kv_cache_prepended",
           "masking_padding_off_by_one", "softmax_global_max", "rope_frequency_exponent",
           "attention_backward_p_no_lse", "paged_decode_block_index",
           "paged_decode_wrong_sequence", "rope_angles_low_precision",
           "rope_rotation_reversed", "attention_backward_gqa_not_summed",
           "paged_decode_length_short", "paged_decode_tail_unmasked", "attention_backward_p_unscaled",
           "paged_decode_repeat", "attention_backward_causal_unmasked",
           # found by their values (value_lines.py)
           "attention_backward_no_delta", "attention_backward_dq_no_scale", "attention_backward_dv_not_transposed",
           "attention_backward_causal_offset_sign", "rope_offset_ignored", "rope_sin_cos_swapped",
           # the widest fold's line, from the memory audit
           "online_softmax_two_pass")
STYLE_QUOTING = ("rope_complex_positions_low_precision", "attention_backward_unflatten_first_head",
                 "rope_rotate_half_frequency_exponent", "paged_decode_csr_first_row",
                 "rope_rotate_half_reversed", "paged_decode_index_select_single_token_masked",
                 "paged_decode_index_select_stale_slot", "paged_decode_index_select_whole_pages",
                 "rope_rotate_half_positions_in_input_dtype",
                 "rope_rotate_half_sin_cos_swapped", "rope_neox_formula_reversed",
                 # found by their values
                 "attention_backward_fa2_no_delta", "attention_backward_fa2_offset_sign",
                 "attention_backward_fa2_top_left",
                 "attention_backward_einsum_dk_unscaled", "attention_backward_einsum_dv_not_transposed",
                 "rope_rotate_half_positions_from_zero", "rope_every_two_table_from_zero")
# an argument left unread (its header says `unread=NAME`): the parameter's own line, quoted as never read
UNREAD = ("attention_mask_ignored", "flash_materialised", "mha_kv_ignored", "kv_cache_no_output_projection",
          "rope_layout_swapped", "rope_partial_ignored", "attention_backward_materialised", "online_softmax_whole_row")
UNREAD_HEADER = re.compile(r"^# expect: .* unread=(\S+)$", re.MULTILINE)
# issue 34's exercises: every planted bug either quotes its planted line or none
ISSUE_34 = sorted(path.stem for prefix in ("rope_", "attention_backward_", "paged_decode_")
                  for path in MUTANTS.glob(f"{prefix}*.py"))


def bug_lines(path: Path) -> set[int]:
    """The lines marked `# BUG`, and for an argument left unread, the line that declares its parameter."""
    text = path.read_text()
    unread = UNREAD_HEADER.search(text)
    declared = {node.lineno for node in ast.walk(ast.parse(text))
                if isinstance(node, ast.arg) and unread is not None and node.arg == unread.group(1)}
    return declared | {number for number, line in enumerate(text.splitlines(), 1) if re.search(r"#.*\bBUG\b", line)}


def graded(grade_file, stem: str, folder: Path = MUTANTS):
    path = folder / f"{stem}.py"
    check_id, diagnosis = expectation(path)
    report = grade_file(path, only=(check_id,))
    result = next(c for c in report.checks if c.id == check_id)
    assert result.diagnosis_id == diagnosis, result.where
    return path, report, result


@pytest.mark.parametrize("stem", QUOTING)
def test_named_mistake_quotes_the_planted_line(stem: str, grade_file):
    path, report, result = graded(grade_file, stem)
    quoted = QUOTED.search(result.where)
    assert quoted, f"no line quoted:\n{result.where}"
    assert quoted["file"] == path.name
    assert int(quoted["line"]) in bug_lines(path), result.where
    planted = path.read_text().splitlines()[int(quoted["line"]) - 1]
    assert planted.strip().startswith(quoted["code"].removesuffix("…"))
    failed = next(test for test in exercism.results(report)["tests"] if "message" in test)
    assert quoted.group(0) in failed["message"]


@pytest.mark.parametrize("stem", UNREAD)
def test_an_argument_left_unread_quotes_its_parameter(stem: str, grade_file):
    """The mask, the layout, rotary_dim, block_size or W_o never read: no op is the mistake's, and the
    first value it changes is on a correct line below, so the parameter's own line is quoted."""
    path, report, result = graded(grade_file, stem)
    quoted = QUOTED.search(result.where)
    assert quoted, f"no line quoted:\n{result.where}"
    parameter = UNREAD_HEADER.search(path.read_text()).group(1)  # type: ignore[union-attr]
    assert int(quoted["line"]) in bug_lines(path) and quoted["code"].endswith(f" never reads {parameter})")
    failed = next(test for test in exercism.results(report)["tests"] if "message" in test)
    assert quoted.group(0) in failed["message"]


@pytest.mark.parametrize("stem", ["kv_cache_upcast", "flash_causal_no_offset"])
def test_no_line_rather_than_a_wrong_one(stem: str, grade_file):
    """A kv cache's upcast has no family of ops; the queries' positions made on one line and the keys' on
    another are both aranges, and either may come first."""
    _, _, result = graded(grade_file, stem)
    assert "Your line" not in result.where


@pytest.mark.parametrize("stem", [mutant.stem for mutant in STYLE_MUTANTS])
def test_public_code_with_a_planted_bug_quotes_its_line_or_none(stem: str, grade_file, tmp_path):
    """A scale left off the scores' line above the exp could be on either line, and lengths read on the
    host issue no op on the planted line: no line there. Elsewhere the planted line, not a feature
    permutation's arange before the frequencies, nor a correct helper that turns positions from 0 into
    tables, nor the line that uses a reversed rotate_half (its −x1 is told by its values), nor the gather
    before a length mask one key off (told by the keys it keeps per row), nor dQ's unscaled product where
    only dK lacks the scale; sin and cos swapped where they are used, under their own names, are."""
    write_style_mutants(tmp_path)
    path, _, result = graded(grade_file, stem, tmp_path)
    line = QUOTED.search(result.where)
    assert (line is not None) == (stem in STYLE_QUOTING), result.where
    assert line is None or int(line["line"]) in bug_lines(path), result.where


@pytest.mark.parametrize("stem", ISSUE_34)
def test_rope_backward_and_paged_bugs_quote_their_planted_line_or_none(stem: str, grade_file):
    path, _, result = graded(grade_file, stem)
    quoted = QUOTED.search(result.where)
    assert quoted is None or int(quoted["line"]) in bug_lines(path), result.where
    assert (quoted is not None) == (stem in QUOTING + UNREAD), result.where


def test_a_top_left_mask_on_query_indices_quotes_no_line(grade_file):
    """flash-attn's Triton backward reads q's rows with offs_m_curr and compares the same arange with the
    keys' top-left: the offset left out belongs to that comparison (and begin_m), not to the arange,
    which is a correct index and holds the same values as FlashAttention-2's top-left `rows`."""
    path = HERE / "realworld9" / "attention_backward_dao_triton_top_left.py"
    result = next(c for c in grade_file(path, only=("causal",)).checks if c.id == "causal")
    assert result.diagnosis_id == "causal-no-offset", result.where
    assert "Your line" not in result.where, result.where


def test_family_picks_first_last_or_by_operand():
    recorded = [{"op": "getitem", "operand": "int1", "line": 4}, {"op": "matmul", "operand": "float4", "line": 5},
                {"op": "getitem", "operand": "int2", "line": 6}, {"op": "matmul", "operand": "float4", "line": 9}]
    assert OpFamily(frozenset({"matmul"})).pick(recorded)["line"] == 5
    assert OpFamily(frozenset({"matmul"}), last=True).pick(recorded)["line"] == 9
    assert OpFamily(frozenset({"getitem"}), operands=frozenset({"int2"})).pick(recorded)["line"] == 6
    assert OpFamily(frozenset({"softmax"})).pick(recorded) is None


def test_family_picks_by_result_and_only_beside_the_ops_it_names():
    recorded = [{"op": "to", "operand": "int1", "result": "float1", "line": 3},
                {"op": "to", "operand": "int1", "result": "half1", "line": 4},
                {"op": "getitem", "operand": "int1", "result": "int0", "line": 5},
                {"op": "arange", "operand": "", "result": "int1", "line": 6}]
    assert OpFamily(frozenset(), results=frozenset({"half1"})).pick(recorded)["line"] == 4
    assert OpFamily(frozenset({"getitem"}), beside=frozenset({"arange"})).pick(recorded) is None
    recorded.append({"op": "getitem", "operand": "int1", "result": "int0", "line": 6})
    assert OpFamily(frozenset({"arange"}), beside=frozenset({"getitem"})).pick(recorded)["line"] == 6


def test_a_mask_offset_quotes_an_arange_only_where_one_line_makes_positions():
    """flash-attn's Triton backward builds its key offsets before its query offsets: the first arange is
    not the queries' positions there, so with aranges on two lines none is quoted; a tril, or the query
    and key positions made on one line, still are."""
    family = FAMILIES["causal-no-offset"]
    keys_then_queries = [{"op": "arange", "operand": "", "result": "int1", "line": 17},
                         {"op": "add", "operand": "int1", "result": "int1", "line": 17},
                         {"op": "arange", "operand": "", "result": "int1", "line": 24}]
    assert family.pick(keys_then_queries) is None
    one_line = [{"op": "arange", "operand": "", "result": "int1", "line": 10},
                {"op": "sub", "operand": "int2", "result": "int2", "line": 10}]
    assert family.pick(one_line)["line"] == 10
    tril = [{"op": "tril", "operand": "bool2", "result": "bool2", "line": 8}, *keys_then_queries]
    assert family.pick(tril)["line"] == 8


def test_a_reversed_rotation_quotes_a_negated_sin_never_rotate_half():
    """A head looped down to 2-D makes rotate_half's −x2 a rank-2 neg too: only a neg where sin is taken
    is the flipped sign."""
    rotate_half = [{"op": "neg", "operand": "float2", "result": "float2", "line": 4},
                   {"op": "cat", "operand": "", "result": "float2", "line": 4}]
    negated_sin = [{"op": "sin", "operand": "float2", "result": "float2", "line": 9},
                   {"op": "neg", "operand": "float2", "result": "float2", "line": 9}]
    family = FAMILIES["rope-rotation-reversed"]
    assert family.pick(rotate_half) is None
    assert family.pick(negated_sin)["line"] == 9


def test_every_family_names_ops_a_recorder_reports():
    names = {op for family in FAMILIES.values() for op in family.ops}
    assert all(name == name.strip("_") and name.isidentifier() for name in names)


@pytest.mark.parametrize("ops", [{"op": 3, "line": 1}, {"op": "matmul", "line": "1"}, "matmul",
                                 {"op": "matmul", "line": 1, "result": ["float2"]},
                                 {"op": "=", "line": 1, "name": {"sin": 1}}])
def test_forged_ops_in_a_reply_are_refused(ops):
    with pytest.raises(protocol.ProtocolError):
        protocol.checked_reply({"ok": True, "ops": [ops]})


def test_recorded_ops_are_capped_and_their_code_cut():
    reply = protocol.checked_reply({"ok": True, "ops": [{"op": "exp", "line": 2, "code": "x" * 10_000,
                                                         "name": "y" * 10_000}] * 5000})
    assert len(reply["ops"]) == protocol.OPS_KEPT
    assert len(reply["ops"][0]["code"]) <= protocol.TEXT_LIMIT and len(reply["ops"][0]["name"]) <= protocol.TEXT_LIMIT


def test_recorder_notes_each_op_once_at_the_learner_line_that_issued_it(tmp_path):
    import torch

    from quizprep.grader.learner_side.op_recorder import OpRecorder

    learner = str(tmp_path / "work.py")
    source = ("import torch\n"
              "def helper(x):\n"
              "    return torch.nn.functional.softmax(x, dim=-1)\n"
              "def attend(q, k, table):\n"
              "    scores = q @ k.transpose(-2, -1)\n"
              "    for _ in range(3):\n"
              "        rows = table[0]\n"
              "    return helper(scores), rows\n")
    namespace: dict = {}
    exec(compile(source, learner, "exec"), namespace)
    recorder = OpRecorder(learner)
    with recorder:
        namespace["attend"](torch.ones(2, 3), torch.ones(4, 3), torch.zeros(2, 5, dtype=torch.int32))
    seen = [(entry["op"], entry["operand"], entry["line"]) for entry in recorder.entries()]
    assert ("matmul", "float2", 5) in seen and ("transpose", "float2", 5) in seen
    assert seen.count(("getitem", "int2", 7)) == 1  # a loop repeats the op, not the entry
    assert ("softmax", "float2", 3) in seen  # inside the learner's helper, not torch's own file
    assert all(line in (3, 5, 7) for _, _, line in seen)


def test_recorder_notes_the_kinds_of_operand_and_result_half_apart(tmp_path):
    import torch

    from quizprep.grader.learner_side.op_recorder import OpRecorder

    learner = str(tmp_path / "angles.py")
    source = ("def angles(positions, dtype):\n"
              "    return positions.to(dtype)[:, None]\n")
    namespace: dict = {}
    exec(compile(source, learner, "exec"), namespace)
    recorder = OpRecorder(learner)
    with recorder:
        namespace["angles"](torch.arange(4), torch.bfloat16)
        namespace["angles"](torch.arange(4), torch.float32)
    kinds = {(entry["op"], entry["operand"], entry["result"]) for entry in recorder.entries()}
    assert kinds == {("to", "int1", "half1"), ("getitem", "half1", "half2"),
                     ("to", "int1", "float1"), ("getitem", "float1", "float2")}
