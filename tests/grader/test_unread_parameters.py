"""An argument left unread: the one parameter of that name, in a function that ran, that nothing reads
but to hand it on to the file's own functions, is the learner's line (learner_source.py); a parameter
read anywhere, one that may be read unseen, or two unread ones quote none."""
from __future__ import annotations

from pathlib import Path

import torch

from quizprep.grader.learner_side import op_recorder, protocol
from quizprep.grader.learner_source import unread_parameter

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


def replayed(tmp_path: Path, source: str) -> tuple[Path, list[dict]]:
    """The learner's file and the ops its lines issued when apply_rope ran, as the recorder notes them."""
    path = tmp_path / "work.py"
    path.write_text(source)
    namespace: dict = {}
    exec(compile(source, str(path), "exec"), namespace)
    recorder = op_recorder.OpRecorder(str(path))
    with recorder:
        namespace["apply_rope"](torch.randn(3, 4, dtype=torch.float64), torch.arange(3.0, dtype=torch.float64), 10.0, 2)
    return path, recorder.entries()


def test_a_parameter_its_function_never_reads_is_quoted_on_its_own_line(tmp_path):
    """`unused` never reads rotary_dim either, but it never ran: apply_rope's is the one."""
    path, recorded = replayed(tmp_path, IGNORES_ROTARY_DIM)
    assert unread_parameter(path, ("rotary_dim",), recorded) == {
        "line": 5, "code": "rotary_dim=None):", "parameter": "rotary_dim", "function": "apply_rope"}
    assert unread_parameter(path, ("positions",), recorded) is None


def test_a_parameter_handed_on_to_a_helper_that_ignores_it_quotes_the_helpers(tmp_path):
    handed_on = IGNORES_ROTARY_DIM.replace("    r = x.shape[-1]\n", "    r = _width(x, rotary_dim=rotary_dim)\n") + (
        "\n\ndef _width(x, rotary_dim):\n    return torch.tensor(x.shape[-1]).item()\n")
    path, recorded = replayed(tmp_path, handed_on)
    found = unread_parameter(path, ("rotary_dim",), recorded)
    assert found is not None and (found["function"], found["line"]) == ("_width", 15)


def test_a_parameter_read_anywhere_quotes_none(tmp_path):
    """A helper may take an argument it has no use for when its caller already acts on it, and a
    torch call is no function of the file: reading it there is reading it."""
    read_by_caller = IGNORES_ROTARY_DIM.replace("    r = x.shape[-1]\n", "    r = rotary_dim or x.shape[-1]\n"
                                                "    r = _width(x, rotary_dim)\n") + (
        "\n\ndef _width(x, rotary_dim):\n    return torch.tensor(x.shape[-1]).item()\n")
    path, recorded = replayed(tmp_path, read_by_caller)
    assert unread_parameter(path, ("rotary_dim",), recorded) is None
    passed_to_torch = IGNORES_ROTARY_DIM.replace("    r = x.shape[-1]\n",
                                                 "    r = x.shape[-1] + 0 * int(torch.tensor(rotary_dim))\n")
    path, recorded = replayed(tmp_path, passed_to_torch)
    assert unread_parameter(path, ("rotary_dim",), recorded) is None


def test_a_parameter_that_may_be_read_unseen_or_two_unread_ones_quote_none(tmp_path):
    through_locals = IGNORES_ROTARY_DIM.replace("    r = x.shape[-1]\n", "    r = x.shape[-1]\n    print(locals())\n")
    path, recorded = replayed(tmp_path, through_locals)
    assert unread_parameter(path, ("rotary_dim",), recorded) is None
    path, recorded = replayed(tmp_path, IGNORES_ROTARY_DIM)
    assert unread_parameter(path, ("rotary_dim", "base"), recorded)["parameter"] == "rotary_dim"  # base is read
    two_unread = IGNORES_ROTARY_DIM.replace("base=10000.0", "base=10000.0, layout='half'")
    path, recorded = replayed(tmp_path, two_unread)
    assert unread_parameter(path, ("rotary_dim", "layout"), recorded) is None


def test_a_replay_at_the_recorders_cap_or_a_file_that_does_not_parse_quotes_none(tmp_path):
    path, recorded = replayed(tmp_path, IGNORES_ROTARY_DIM)
    assert unread_parameter(path, ("rotary_dim",), recorded * protocol.OPS_KEPT) is None
    path.write_text(IGNORES_ROTARY_DIM + "def broken(:\n")
    assert unread_parameter(path, ("rotary_dim",), recorded) is None
