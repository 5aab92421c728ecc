"""What the learner's source says where a replay's ops cannot (learner_source.py): a mask that never
ran, the one statement calling the mistake's op that issued nothing in a replay, in a function that
ran; and an argument left unread, the one parameter of that name, in a function that ran, that
nothing reads but to hand it on to the file's own functions. Anything less certain quotes none."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import torch

from quizprep.grader.learner_side import op_recorder, protocol
from quizprep.grader.learner_source import index_makers, unread_parameter, unrun_call

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


def replayed(tmp_path: Path, source: str,
             call: Callable[[dict], object] = lambda learner: learner["probabilities"](torch.randn(3, 3), True),
             ) -> tuple[Path, list[dict]]:
    """The learner's file and the ops its lines issued when `call` ran its functions, as the worker's
    recorder notes them."""
    path = tmp_path / "work.py"
    path.write_text(source)
    namespace: dict = {}
    exec(compile(source, str(path), "exec"), namespace)
    recorder = op_recorder.OpRecorder(str(path))
    with recorder:
        call(namespace)
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


IGNORES_ROTARY_DIM = """\
import torch


def apply_rope(x, positions, base=10000.0,
               rotary_dim=None):
    r = x.shape[-1]
    inv_freq = base ** (-torch.arange(0, r, 2, dtype=torch.float64) / r)
    return x * torch.cos(positions[:, None] * inv_freq).repeat(1, 2)


def unused(x, rotary_dim):
    return x
"""


def rope_replayed(tmp_path: Path, source: str) -> tuple[Path, list[dict]]:
    """The file and the ops its lines issued when apply_rope ran (rotary_dim 2)."""
    return replayed(tmp_path, source, lambda learner: learner["apply_rope"](
        torch.randn(3, 4, dtype=torch.float64), torch.arange(3.0, dtype=torch.float64), 10.0, 2))


def test_a_parameter_its_function_never_reads_is_quoted_on_its_own_line(tmp_path):
    """`unused` never reads rotary_dim either, but it never ran: apply_rope's is the one."""
    path, recorded = rope_replayed(tmp_path, IGNORES_ROTARY_DIM)
    assert unread_parameter(path, ("rotary_dim",), recorded) == {
        "line": 5, "code": "rotary_dim=None):", "parameter": "rotary_dim", "function": "apply_rope"}
    assert unread_parameter(path, ("positions",), recorded) is None


def test_a_parameter_handed_on_to_a_helper_that_ignores_it_quotes_the_helpers(tmp_path):
    handed_on = IGNORES_ROTARY_DIM.replace("    r = x.shape[-1]\n", "    r = _width(x, rotary_dim=rotary_dim)\n") + (
        "\n\ndef _width(x, rotary_dim):\n    return torch.tensor(x.shape[-1]).item()\n")
    path, recorded = rope_replayed(tmp_path, handed_on)
    found = unread_parameter(path, ("rotary_dim",), recorded)
    assert found is not None and (found["function"], found["line"]) == ("_width", 15)


def test_a_parameter_read_anywhere_quotes_none(tmp_path):
    """A helper may take an argument it has no use for when its caller already acts on it, and a
    torch call is no function of the file: reading it there is reading it."""
    read_by_caller = IGNORES_ROTARY_DIM.replace("    r = x.shape[-1]\n", "    r = rotary_dim or x.shape[-1]\n"
                                                "    r = _width(x, rotary_dim)\n") + (
        "\n\ndef _width(x, rotary_dim):\n    return torch.tensor(x.shape[-1]).item()\n")
    path, recorded = rope_replayed(tmp_path, read_by_caller)
    assert unread_parameter(path, ("rotary_dim",), recorded) is None
    passed_to_torch = IGNORES_ROTARY_DIM.replace("    r = x.shape[-1]\n",
                                                 "    r = x.shape[-1] + 0 * int(torch.tensor(rotary_dim))\n")
    path, recorded = rope_replayed(tmp_path, passed_to_torch)
    assert unread_parameter(path, ("rotary_dim",), recorded) is None


def test_a_parameter_that_may_be_read_unseen_or_two_unread_ones_quote_none(tmp_path):
    through_locals = IGNORES_ROTARY_DIM.replace("    r = x.shape[-1]\n", "    r = x.shape[-1]\n    print(locals())\n")
    path, recorded = rope_replayed(tmp_path, through_locals)
    assert unread_parameter(path, ("rotary_dim",), recorded) is None
    path, recorded = rope_replayed(tmp_path, IGNORES_ROTARY_DIM)
    assert unread_parameter(path, ("rotary_dim", "base"), recorded)["parameter"] == "rotary_dim"  # base is read
    two_unread = IGNORES_ROTARY_DIM.replace("base=10000.0", "base=10000.0, layout='half'")
    path, recorded = rope_replayed(tmp_path, two_unread)
    assert unread_parameter(path, ("rotary_dim", "layout"), recorded) is None


def test_an_unread_parameter_past_the_recorders_cap_or_in_a_file_that_does_not_parse_quotes_none(tmp_path):
    path, recorded = rope_replayed(tmp_path, IGNORES_ROTARY_DIM)
    assert unread_parameter(path, ("rotary_dim",), recorded * protocol.OPS_KEPT) is None
    path.write_text(IGNORES_ROTARY_DIM + "def broken(:\n")
    assert unread_parameter(path, ("rotary_dim",), recorded) is None
