"""The `quizprep` command line: quiz options without `quiz`, help with examples, and --topic and
--question checked against the banks before the app opens."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

from quizprep import cli
from quizprep.tui.options import QuizOptions

DATA = Path(__file__).parent / "tui" / "data"  # topics alpha and beta


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """What the quiz app would have been opened with, instead of opening it."""
    calls: list[dict] = []

    class FakeApp:
        return_code = 0

        def __init__(self, options: QuizOptions, **injected: object) -> None:
            calls.append({**options._asdict(), **injected})

        def run(self) -> None:
            pass

    monkeypatch.setattr("quizprep.tui.app.QuizApp", FakeApp)
    return calls


@pytest.mark.parametrize("argv", [
    ["--db", "x.db"],
    ["--topic", "memory", "--db", "x.db"],
    ["quiz", "--db", "x.db", "--topic", "memory"],
])
def test_quiz_options_work_without_the_word_quiz(opened: list[dict], argv: list[str]) -> None:
    assert cli.main(argv) == 0
    [options] = opened
    assert str(options["db"]) == "x.db"
    assert list(options["topics"]) == (["memory"] if "memory" in argv else [])


def test_no_arguments_open_the_app(opened: list[dict]) -> None:
    assert cli.main([]) == 0
    assert opened[0]["question"] is None and opened[0]["mode"] is None


def test_help_shows_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    assert "examples:\n  quizprep " in out and "quizprep --db x.db --topic memory" in out
    assert "quizprep export --anki deck.apkg" in out
    with pytest.raises(SystemExit):
        cli.main(["quiz", "--help"])
    assert "quizprep --question gqa-mqa-definition" in capsys.readouterr().out


def test_version_is_still_quizprep_s_own(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.startswith("quizprep ")


def test_unknown_topic_fails_listing_the_topics(opened: list[dict], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["quiz", "--topic", "attention"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("quizprep quiz: no questions in topic(s) attention; "
                          "the topics are: beyond_softmax, complexity, flash,")
    assert " memory," in err and opened == []


@pytest.mark.parametrize(("argv", "message"), [
    (["--topic", "gamma"], "no questions in topic(s) gamma; the topics are: alpha, beta\n"),
    (["--question", "alpha-fre"],
     "no question has id 'alpha-fre'; did you mean alpha-free?\n"),
    (["--question", "alpha-frea"],
     "no question has id 'alpha-frea'; did you mean alpha-free, alpha-choice, alpha-numeric?\n"),
    (["--question", "zzz"], "no question has id 'zzz'\n"),
    # issue 32, item 10: a part of an id found nothing, however many ids contain it
    (["--question", "alpha"],
     "no question has id 'alpha'; did you mean alpha-choice, alpha-free, alpha-multi, "
     "or 1 more containing 'alpha'?\n"),
    (["--question", "NUMERIC"], "no question has id 'NUMERIC'; did you mean alpha-numeric?\n"),
    (["--question", "alpha-free", "--topic", "beta"],
     "question alpha-free is in topic alpha, which --topic leaves out\n"),
])
def test_selection_is_checked_against_the_given_banks(opened: list[dict], capsys: pytest.CaptureFixture[str],
                                                      argv: list[str], message: str) -> None:
    assert cli.main(["--bank", str(DATA), *argv]) == 2
    assert capsys.readouterr().err == f"quizprep quiz: {message}"
    assert opened == []


def test_question_opens_the_app_with_the_banks_already_read(opened: list[dict]) -> None:
    assert cli.main(["--bank", str(DATA), "--question", "alpha-free"]) == 0
    [options] = opened
    assert options["question"] == "alpha-free"
    assert "alpha-free" in {q.id for q in options["loaded"].questions}  # not read a second time


def test_question_and_mode_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--question", "x", "--mode", "review"])
    assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_every_command_still_registers() -> None:
    names = set()
    for action in cli.build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            names = set(action.choices)
    assert {"quiz", "check", "grade", "budget", "stats", "export"} <= names


def test_session_length_and_mock_minutes_reach_the_app(opened: list[dict]) -> None:
    assert cli.main(["--mode", "mock", "--length", "5", "--minutes", "12.5"]) == 0
    [options] = opened
    assert (options["length"], options["minutes"]) == (5, 12.5)
    assert cli.main([]) == 0
    assert (opened[1]["length"], opened[1]["minutes"]) == (None, None)


@pytest.mark.parametrize(("argv", "message"), [
    (["--length", "0"], "argument --length: '0' must be more than 0"),
    (["--length", "2.5"], "argument --length: '2.5' is not a whole number"),
    (["--minutes", "soon"], "argument --minutes: 'soon' is not a number"),
    (["--minutes", "nan"], "argument --minutes: 'nan' must be more than 0"),
    (["--minutes", "inf"], "argument --minutes: 'inf' must be more than 0"),
    (["--minutes", "1e308"], "argument --minutes: '1e308' is more than 1440"),
])
def test_a_length_or_time_that_is_not_positive_is_refused(opened: list[dict], capsys: pytest.CaptureFixture[str],
                                                        argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err and opened == []



def test_interview_cram_search_and_tags_reach_the_app(opened: list[dict]) -> None:
    soon = date.today() + timedelta(days=30)
    assert cli.main(["--interview", soon.isoformat(), "--cram"]) == 0
    assert (opened[-1]["interview"], opened[-1]["mode"]) == (soon, "cram")
    assert cli.main(["--interview", date.today().isoformat()]) == 0  # the interview is today
    assert opened[-1]["interview"] == date.today()
    assert cli.main(["--bank", str(DATA), "--search", "KV", "--tag", "masks", "--tag", "kv-cache"]) == 0
    assert (opened[-1]["search_text"], opened[-1]["tags"]) == ("KV", ["masks", "kv-cache"])
    assert cli.main([]) == 0
    assert (opened[-1]["interview"], opened[-1]["search_text"], opened[-1]["tags"]) == (None, "", [])


@pytest.mark.parametrize(("argv", "message"), [
    (["--interview", (date.today() - timedelta(days=1)).isoformat()], "has passed: the interview date must be"),
    (["--interview", "12/11/2026"], "'12/11/2026' could be day/month or month/day"),
    (["--interview", "next week"], "'next week' is not a date: type it as e.g. 2026-12-15, Dec 15 or 15/12"),
    (["--interview", "2026-02-30"], "'2026-02-30' is not a date: day is out of range for month"),
    (["--cram", "--mode", "mock"], "not allowed with argument --cram"),
])
def test_a_bad_interview_date_or_start_is_refused(opened: list[dict], capsys: pytest.CaptureFixture[str],
                                                  argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err and opened == []


def test_a_tags_start_is_enough_on_the_command_line(opened: list[dict]) -> None:
    # the same rule as the app's #tag search: "--tag kv" is kv-cache
    assert cli.main(["--bank", str(DATA), "--tag", "kv"]) == 0
    assert opened[-1]["tags"] == ["kv"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--search", "no such words"], "no question matches --search 'no such words'\n"),
    (["--tag", "rope"], "no question is tagged rope; the 3 tags are: kv-cache, masks, scaling\n"),
    # a misspelt tag ("mask" is the start of masks, and finds it: see test_a_tag_is_found_by_its_start)
    (["--tag", "maks"], "no question is tagged maks (did you mean masks?); the 3 tags are: kv-cache, masks, scaling\n"),
    (["--tag", "masks", "--search", "variance"], "no question matches --search 'variance' --tag masks\n"),
    (["--tag", "masks", "--question", "alpha-free"], "question alpha-free does not match --tag masks\n"),
])
def test_filters_that_leave_nothing_fail_before_the_app_opens(opened: list[dict], capsys: pytest.CaptureFixture[str],
                                                             argv: list[str], message: str) -> None:
    assert cli.main(["--bank", str(DATA), *argv]) == 2
    assert capsys.readouterr().err == f"quizprep quiz: {message}" and opened == []


@pytest.mark.parametrize(("argv", "said"), [
    (["quiz", "--bank", "{gone}"], "quizprep quiz: no such bank file or folder: {gone}"),
    (["check", "{gone}"], "quizprep check: no such file or folder: {gone}"),
    (["stats", "--bank", "{gone}"], "quizprep stats: no such bank file or folder: {gone}"),
    (["report", "--out", "r.md", "--bank", "{gone}"], "quizprep report: no such bank file or folder: {gone}"),
])
def test_a_missing_path_is_named_and_exits_2(argv, said, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("QUIZPREP_DB", str(tmp_path / "progress.sqlite3"))
    gone = str(tmp_path / "gone")
    assert cli.main([word.format(gone=gone) for word in argv]) == 2
    assert capsys.readouterr().err.strip() == said.format(gone=gone)


def test_the_command_itself_ends_its_process_with_the_status_and_a_call_returns_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The `quizprep` process ends without the interpreter's teardown (a second of CPU after a
    grade); a caller of main (a test, a script) gets the status back and its process goes on."""
    ended: list[int] = []
    monkeypatch.setattr(cli, "end_process", ended.append)
    assert cli.main(["init", str(tmp_path / "called")]) == 0
    assert ended == []
    monkeypatch.setattr("sys.argv", ["quizprep", "init", str(tmp_path / "command")])
    cli.main()
    assert ended == [0] and (tmp_path / "command").is_dir()


ENDING = """
import atexit, sys, threading, time
from quizprep.cli import end_process

class Torn:
    def __del__(self):
        print("torn down")

KEPT = Torn()  # a module's object: the interpreter's teardown would delete it
atexit.register(lambda: print("atexit ran"))
threading.Thread(target=lambda: (time.sleep(0.2), print("thread finished"))).start()
print("x" * 100_000)  # still in the pipe's buffer when the process ends
end_process(int(sys.argv[1]))
"""


@pytest.mark.parametrize("status", [0, 3])
def test_ending_the_process_keeps_what_the_exit_owes_and_skips_the_teardown(status: int) -> None:
    ended = subprocess.run([sys.executable, "-c", ENDING, str(status)], capture_output=True, text=True,
                           timeout=60)
    lines = ended.stdout.splitlines()
    assert ended.returncode == status, ended.stderr
    assert lines == ["x" * 100_000, "thread finished", "atexit ran"]


BUFFERED_THEN_ENDED = """
import io, sys
from quizprep.cli import end_process
sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)))  # buffered, whatever is asked
print("buffered")
end_process(0)
"""


def test_an_output_that_cannot_be_flushed_ends_with_status_120() -> None:
    """Python's own exit says 120 when its last flush fails: here the pipe's reader is gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        ended = subprocess.run([sys.executable, "-c", BUFFERED_THEN_ENDED], stdout=write_end, timeout=60)
    finally:
        os.close(write_end)
    assert ended.returncode == 120
