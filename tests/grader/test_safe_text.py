"""What reaches the instructor of the learner's doing (issue 30, "Reports and terminals"): a whole
report stays under 1 MB, a source line is read with a cap, control characters are shown as escapes
in every text output, and a class folder's links are not followed out of it."""
from __future__ import annotations

import io
import json
import sys

import pytest
from rich.console import Console

from quizprep.cli.cohort_command import table
from quizprep.grader import exercism
from quizprep.grader.bounds import REPORT_BYTES, bounded, printable
from quizprep.grader.cohort import Cohort, CohortRow, submissions
from quizprep.grader.grade import GradeOptions, GradeReport
from quizprep.grader.output import frames_from_dump
from quizprep.grader.report import render, to_json
from quizprep.grader.spec import CheckResult

# What a hostile file can print or be named: clear the screen, go home, and draw a verdict.
FAKE = "\x1b[2J\x1b[H\x1b[1;32mall checks pass\x1b[0m\r\x07\x9b31m\u202e"
CONTROLS = ("\x1b", "\r", "\x07", "\x9b", "\u202e")
# What a reader cannot see (third red team): "alice\u200b.py" showed as a second "alice.py" in a
# class table; C1 and bidirectional characters reached --json and results.json raw.
HIDDEN = ("\u200b", "\u00ad", "\u2028", "\u2029", "\ufeff", "\u2066", "\x9b", "\x85", "\x7f", "\U000e0001")


def flooded_check(number: int) -> CheckResult:
    """What 20 forbidden calls of 20 frames each per reply made of one check."""
    frame = "/class/alice.py:3 in f: " + "x" * 600
    return CheckResult(f"check{number}", "values", "fail", "uses " + ", ".join(["torch.softmax" + "y" * 600] * 20),
                       traceback=[frame] * 400, output="z" * 4096, tried="w" * 50_000)


def test_a_flooded_report_fits_in_a_megabyte_as_json_and_as_results_json():
    report = bounded(GradeReport("softmax", "Stable softmax", "/class/alice.py",
                                 [CheckResult("load", "file loads", "pass")] +
                                 [flooded_check(n) for n in range(40)], {"seed": 0}))
    assert len(to_json(report).encode()) <= REPORT_BYTES
    assert len(json.dumps(exercism.results(report), ensure_ascii=False).encode()) <= REPORT_BYTES
    check = report.checks[1]
    assert len(check.traceback) == 20 and check.message.startswith("uses torch.softmax")
    assert check.output.endswith("z") and check.tried.endswith("…")


def test_a_crash_on_a_line_of_a_10_mb_comment_reads_600_characters_of_it(tmp_path):
    source = tmp_path / "alice.py"
    source.write_text("import os\nos.abort()  # " + "c" * (10 << 20) + "\nx = 1\n")
    dump = f'Fatal Python error: Aborted\n\nCurrent thread 0x0001 (most recent call first):\n' \
           f'  File "{source}", line 2 in <module>\n  File "{source}", line 3 in <module>\n'
    frames = frames_from_dump(dump, str(source))
    assert [len(frame.code) for frame in frames] == [5, 600]
    assert frames[1].code.startswith("os.abort()  # ccc") and frames[1].code.endswith("…")


def rendered(report: GradeReport) -> str:
    console = Console(file=io.StringIO(), width=200, force_terminal=True, color_system=None)
    render(report, console)
    return console.file.getvalue()


def test_the_text_report_escapes_control_characters_from_the_learners_side():
    failing = CheckResult("values", "values", "fail", f"raised ValueError: {FAKE}", hint="h",
                          traceback=[f"/class/a{FAKE}.py:1 in f: {FAKE}"], output=f"printed {FAKE}\n")
    text = rendered(GradeReport("softmax", "Stable softmax", f"/class/a{FAKE}.py",
                                [CheckResult("load", "file loads", "pass"), failing], {"seed": 0}))
    assert not any(control in text for control in CONTROLS), repr(text)
    assert "\\x1b[2J\\x1b[H" in text and "\\r\\x07\\x9b31m\\u202e" in text


def test_a_message_with_line_breaks_draws_no_check_line_or_verdict_of_its_own():
    # the red team's exception message "\n ✓ values against the float64 reference\n\nall checks pass …"
    forged = "x\n ✓ values against the float64 reference\n\nall checks pass  (score 100%; seed 1)"
    failing = CheckResult("values", "values", "fail", f"raised Weird: {forged}", hint="h")
    text = rendered(GradeReport("softmax", "Stable softmax", "/class/a.py",
                                [CheckResult("load", "file loads", "pass"), failing], {"seed": 0}))
    starts = [line for line in text.splitlines() if line.startswith(("all checks pass", " ✓ values"))]
    assert starts == [], text


def test_the_class_table_escapes_file_names_and_takes_no_markup_from_them():
    rows = [CohortRow(f"bob{FAKE}.py", 0.0, False, ["values"], [], 1.0, error=f"ValueError {FAKE}"),
            CohortRow("[green]yes[/].py", 1.0, True, [], [], 1.0)]
    console = Console(file=io.StringIO(), width=400, force_terminal=True, color_system=None)
    console.print(table(rows, "softmax"))
    text = console.file.getvalue()
    assert not any(control in text for control in CONTROLS), repr(text)
    assert "bob\\x1b[2J" in text and "[green]yes[/].py" in text


def test_hidden_characters_are_escaped_in_the_text_json_results_json_and_csv(tmp_path):
    from quizprep.cli.cohort_command import write_csv

    name = "alice" + "".join(HIDDEN) + ".py"
    failing = CheckResult("values", "values", "fail", f"raised ValueError: {name}", hint="h", output=name)
    report = GradeReport("softmax", "Stable softmax", name, [CheckResult("load", "file loads", "pass"), failing],
                         {"seed": 0})
    exercism.write(exercism.results(report), tmp_path)
    write_csv([CohortRow(name, 0.0, False, ["values"], [], 1.0, error=name)], tmp_path / "class.csv")
    texts = {"text": rendered(report), "json": to_json(report), "results.json": (tmp_path / "results.json").read_text(),
             "csv": (tmp_path / "class.csv").read_text()}
    assert {kind: [char for char in HIDDEN if char in text] for kind, text in texts.items()} == dict.fromkeys(texts, [])
    assert json.loads(texts["json"])["file"] == name  # escaped as JSON, so the data is the same
    assert "alice\\u200b\\xad\\u2028" in texts["text"] and "alice\\u200b" in texts["csv"]


def test_one_line_escapes_line_breaks_too():
    assert printable("a\nb\tc") == "a\nb\tc"
    assert printable("a\nb\tc\r", one_line=True) == "a\\nb\\tc\\r"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")
def test_a_link_out_of_the_class_folder_is_not_followed(tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("the first line of another user's file\n")
    secret.chmod(0o600)
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "mallory.py").symlink_to(secret)
    rows = Cohort(submissions(folder), GradeOptions(exercise="softmax"), jobs=1, root=folder, seed=0,
                  fresh=True).run()
    assert [row.file for row in rows] == ["mallory.py"]
    assert "symbolic link" in rows[0].error and rows[0].report is None and not rows[0].passed


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")
def test_a_link_to_a_classmates_file_is_not_graded_as_ones_own(tmp_path):
    # the red team's "bob_copies_alice.py -> alice.py" scored 100 % with no sign in the table
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text("this line is not reached: alice is not graded here\n")
    (folder / "bob.py").symlink_to(folder / "alice.py")
    rows = Cohort([folder / "bob.py"], GradeOptions(exercise="softmax"), jobs=1, root=folder, seed=0,
                  fresh=True).run()
    assert "symbolic link to alice.py, another file of the class" in rows[0].error and not rows[0].passed
