"""A mask that never ran: the one statement calling the mistake's op that issued nothing in a replay,
in a function that ran, is the learner's line (unrun_lines.py); anything less certain quotes none."""
from __future__ import annotations

from pathlib import Path

import torch

from quizprep.grader.learner_side import op_recorder, protocol
from quizprep.grader.learner_source import index_makers, unrun_call

MASKS = frozenset({"masked_fill", "where"})
BRANCH_NEVER_TAKEN = """\
import torch


def probabilities(scores, causal):
    future = torch.ones(scores.shape[-2:], dtype=torch.bool).triu(1)
    if causal and False:
        scores = scores.masked_fill_(future,
                                     float("-inf"))
    return torch.softmax(scores, dim=-1)


def unused(scores, future):
    return torch.where(future, 0.0, scores)
"""


def replayed(tmp_path: Path, source: str) -> tuple[Path, list[dict]]:
    """The learner's file and the ops its lines issued, as the worker's recorder notes them."""
    path = tmp_path / "work.py"
    path.write_text(source)
    namespace: dict = {}
    exec(compile(source, str(path), "exec"), namespace)
    recorder = op_recorder.OpRecorder(str(path))
    with recorder:
        namespace["probabilities"](torch.randn(3, 3), True)
    return path, recorder.entries()


def test_a_mask_under_a_condition_that_never_held_is_quoted(tmp_path):
    path, recorded = replayed(tmp_path, BRANCH_NEVER_TAKEN)
    assert unrun_call(path, MASKS, recorded) == {"line": 7, "code": "scores = scores.masked_fill_(future,"}
    assert unrun_call(path, frozenset({"tril"}), recorded) is None  # nothing calls it


def test_a_statement_that_ran_or_a_function_that_never_did_is_not_quoted(tmp_path):
    """`unused`'s where never ran, but neither did anything else of its function."""
    ran = BRANCH_NEVER_TAKEN.replace("causal and False", "causal")
    path, recorded = replayed(tmp_path, ran)
    assert any(op["op"] == "masked_fill" and op["line"] == 7 for op in recorded)
    assert unrun_call(path, MASKS, recorded) is None


def test_two_statements_that_never_ran_quote_none(tmp_path):
    twice = BRANCH_NEVER_TAKEN.replace("    return torch.softmax(", "    if scores.dim() > 2:\n"
                                       "        scores = torch.where(future, -1e9, scores)\n"
                                       "    return torch.softmax(")
    path, recorded = replayed(tmp_path, twice)
    assert unrun_call(path, MASKS, recorded) is None


def test_a_replay_at_the_recorders_cap_or_a_file_that_does_not_parse_quotes_none(tmp_path):
    path, recorded = replayed(tmp_path, BRANCH_NEVER_TAKEN)
    assert unrun_call(path, MASKS, recorded * protocol.OPS_KEPT) is None
    path.write_text(BRANCH_NEVER_TAKEN + "def broken(:\n")
    assert unrun_call(path, MASKS, recorded) is None


POSITIONS_AND_INDICES = """\
import torch


def probabilities(q, k, lse, n, m, block):
    for i in range(0, n, block):
        offs = torch.arange(i, min(i + block, n))
        rows = torch.arange(i, min(i + block, n))
        cols = torch.arange(m)
        p = torch.exp(q[:, offs] @ k.T - lse[offs, None])
        p = torch.where(cols[None, :] <= rows[:, None], p, 0.0)
    return p
"""


def test_a_name_read_as_an_index_is_told_from_one_read_as_a_position(tmp_path):
    """flash-attn's Triton backward reads q's rows with offs_m_curr and compares the same arange with the
    keys: an index, whose offset may belong to the comparison; FlashAttention-2's `rows` only compares."""
    path = tmp_path / "work.py"
    path.write_text(POSITIONS_AND_INDICES)
    indexes_tensors = index_makers(path)
    assert indexes_tensors(6)
    assert not indexes_tensors(7) and not indexes_tensors(8)
    assert indexes_tensors(1)  # no statement of a function: nothing known
    path.write_text(POSITIONS_AND_INDICES + "def broken(:\n")
    assert index_makers(path)(7)  # read again: the file does not parse


def test_a_mask_on_a_whole_path_that_never_ran_is_not_quoted(tmp_path):
    """An untiled path with its mask, and a tiled path that ran without one: the mask that never ran is
    not the line the tiled path lacks."""
    two_paths = BRANCH_NEVER_TAKEN.replace("    if causal and False:\n", "    if scores.dim() > 2:\n"
                                           "        scores = scores * 2.0\n")
    path, recorded = replayed(tmp_path, two_paths)
    assert unrun_call(path, MASKS, recorded) is None
