"""Small command-line texts of issue 21, item 11: `stats --db typo.db` says the file is missing
(and does not create it) instead of showing zeros; an exercise name taken from the file's name
points at --exercise; fp8 has "1 byte per element", not "1 bytes"."""
from __future__ import annotations

from pathlib import Path

import pytest

from quizprep import cli

BANK = Path(__file__).parent / "tui" / "data" / "alpha.yaml"


@pytest.mark.parametrize("command", [["stats"], ["report", "--out", "r.md"]])
def test_a_missing_database_is_an_error_not_zeros(tmp_path: Path, monkeypatch, capsys, command: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main([*command, "--db", "typo.db", "--bank", str(BANK)]) == 1
    captured = capsys.readouterr()
    assert f"quizprep {command[0]}: no progress database at typo.db" in captured.err
    assert "0 answers" not in captured.out and list(tmp_path.iterdir()) == []


def test_an_exercise_named_by_its_file_points_at_the_exercise_option(tmp_path: Path, capsys) -> None:
    submission = tmp_path / "mha_scale.py"
    submission.write_text("def f(): pass\n", encoding="utf-8")
    assert cli.main(["grade", str(submission)]) == 2
    err = capsys.readouterr().err
    assert "unknown exercise 'mha_scale'" in err and "--exercise NAME" in err and "mha_scale.py" in err


def test_one_byte_per_element_is_singular(capsys) -> None:
    assert cli.main(["budget", "--model", "llama-3-8b", "--seq", "1024", "--dtype", "fp8"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "1 byte per element" in out and "1 bytes" not in out


def test_stats_says_no_data_as_the_app_does(tmp_path: Path, capsys) -> None:
    # The app's tables show an em dash for a value with nothing behind it; `stats` showed an en dash.
    from quizprep.study.store import Store

    Store.open(tmp_path / "progress.db").close()
    assert cli.main(["stats", "--db", str(tmp_path / "progress.db"), "--bank", str(BANK)]) == 0
    out = capsys.readouterr().out
    assert "accuracy — ·" in out and "–" not in out


def test_stats_says_how_many_of_today_are_due_now_as_home_counts(tmp_path: Path, capsys) -> None:
    """A question missed just now comes due again later today: `stats` counted it today while
    Home said 0 due (issue 32, item 10), and now says both."""
    import random

    from quizprep.bank import load_banks
    from quizprep.study.builders import practice
    from quizprep.study.store import Store

    with Store.open(tmp_path / "progress.db") as store:
        run = practice(store, load_banks([BANK]).questions, rng=random.Random(1))
        run.queue = ["alpha-choice"]
        run.answer_choice(run.next(), {1})  # wrong: due again in a minute or so
    assert cli.main(["stats", "--db", str(tmp_path / "progress.db"), "--bank", str(BANK)]) == 0
    out = capsys.readouterr().out
    assert "│ 1 (0 due now) │" in out.split("Due in the coming days")[1].splitlines()[4], out
