from __future__ import annotations

import argparse
import random
import subprocess
import sys
from datetime import timedelta, timezone
from pathlib import Path

import pytest

from quizprep.cli import progress as command
from quizprep.study import builders
from quizprep.study.report import build_report, render_html, render_markdown, write_report

DATA = Path(__file__).parent / "data"
UTC = timezone.utc


@pytest.fixture
def history(store, questions, clock):
    """A session with one wrong numeric answer, a self-assessed free response and a choice."""
    run = builders.practice(store, questions, ["alpha"], now=clock, rng=random.Random(11))
    run.queue = ["alpha-numeric", "alpha-follow", "alpha-one"]
    numeric = run.next()
    clock.tick(12)
    run.answer_numeric(numeric, f"{numeric.draw.answer} KiB")
    free = run.next()
    clock.tick(60)
    run.assess(run.answer_free(free, "Because <script>alert(1)</script> | pipes"), [True, False, True])
    choice = run.next()
    clock.tick(5)
    run.answer_choice(choice, [0])
    return numeric.draw


def test_markdown_report_shows_topics_rubric_and_the_exact_draw(store, questions, clock, history):
    clock.tick(minutes=10)  # the wrong answer's learning step is over
    text = render_markdown(build_report(store, questions, now=clock(), tz=UTC, titles={"alpha": "Alpha topic"}))
    n = history.values["n"]
    assert "| Alpha topic | 4 | 3 | 1 | 3 | 58% |" in text  # (0 + 0.75 + 1) / 3; only the wrong one is due
    assert "| alpha-follow | gives an example | 1 of 1 |" in text
    assert "- [x] states the reason (weight 2)" in text and "- [ ] gives an example (weight 1)" in text
    assert f"seed {history.seed}" in text
    assert f"> Bytes for {n:,} fp16 values?" in text
    assert f"- answered: {2 * n} KiB" in text
    assert f"answer = 2 × n = 2 × {n:,} = " in text
    assert "\\| pipes" not in text and "Because <script>" in text  # quoted prose, not a table cell


@pytest.mark.parametrize(("tz", "zone"), [
    (UTC, "UTC"),
    (timezone(timedelta(hours=1), "CET"), "CET (UTC+01:00)"),
    (timezone(timedelta(hours=-3)), "UTC-03:00"),  # a zone known only by its offset
])
def test_the_report_says_which_time_zone_its_times_are_in(store, questions, clock, tz, zone):
    # "Generated 2025-03-10 10:00" alone left a coach to guess whose 10:00 (the app says "times in UTC")
    report = build_report(store, questions, now=clock(), tz=tz)
    local = clock().astimezone(tz)
    generated = f"Generated {local:%Y-%m-%d %H:%M}; times in {zone}."
    assert generated in render_markdown(report) and f"<p>{generated}" in render_html(report)


def test_html_report_escapes_the_learners_text(store, questions, clock, history):
    page = render_html(build_report(store, questions, now=clock(), tz=UTC))
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert f"seed {history.seed}" in page and "✗ gives an example" in page


def test_a_miss_whose_question_no_longer_evaluates_is_left_out_not_a_crash(store, questions, clock, history):
    import dataclasses

    from quizprep.bank.formula import parse_formula

    changed = [dataclasses.replace(q, answer=parse_formula("n // 0")) if q.id == "alpha-numeric" else q
               for q in questions]  # edited since the answer was given: no draw evaluates now
    report = build_report(store, changed, now=clock(), tz=UTC)
    assert report.numeric_misses == () and report.stats.total_answers == 3


def test_report_of_an_empty_database(store, questions, clock):
    text = render_markdown(build_report(store, questions, now=clock(), tz=UTC))
    assert "0 answers" in text and "No answers yet." in text and "None missed yet." in text


def test_write_report_picks_the_format_by_suffix(store, questions, clock, history, tmp_path):
    report = build_report(store, questions, now=clock(), tz=UTC)
    assert write_report(tmp_path / "r.md", report).read_text().startswith("# quizprep self-assessment")
    assert write_report(tmp_path / "r.HTML", report).read_text().startswith("<!DOCTYPE html>")
    with pytest.raises(ValueError, match=".md or .html"):
        write_report(tmp_path / "r.txt", report)


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="quizprep")
    command.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.handler(args)


def test_stats_command_prints_progress(db_path, history, capsys):
    assert run_cli("stats", "--db", str(db_path), "--bank", str(DATA / "alpha.yaml")) == 0
    out = capsys.readouterr().out
    assert "3 answers" in out and "Alpha topic" in out and "gives an example" in out
    assert "Due in the coming days" in out


def test_report_command_writes_the_file(db_path, history, tmp_path, capsys):
    out = tmp_path / "me.html"
    assert run_cli("report", "--out", str(out), "--db", str(db_path), "--bank", str(DATA / "alpha.yaml")) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert "Alpha topic" in out.read_text()


def test_report_command_refuses_an_unknown_format(db_path, tmp_path, capsys):
    assert run_cli("report", "--out", str(tmp_path / "me.pdf"), "--db", str(db_path)) == 2
    assert ".md or .html" in capsys.readouterr().err
    assert not db_path.exists()


def test_commands_warn_about_skipped_questions_and_refuse_a_foreign_database(tmp_path, capsys):
    db = tmp_path / "p.db"
    db.write_bytes(b"garbage" * 100)
    assert run_cli("stats", "--db", str(db), "--bank", str(DATA / "broken.yaml")) == 1
    err = capsys.readouterr().err
    assert "warning: skipped:" in err and "broken.yaml:16: [broken-bad]" in err
    assert f"quizprep stats: {db} is not a quizprep progress database (it is not an SQLite database), so it " \
           "was left as it is." in err
    assert [p.name for p in tmp_path.iterdir()] == ["p.db"] and db.read_bytes() == b"garbage" * 100


def test_missing_bank_is_a_usage_error(db_path, tmp_path, capsys):
    assert run_cli("stats", "--db", str(db_path), "--bank", str(tmp_path / "nope.yaml")) == 2
    assert "nope.yaml" in capsys.readouterr().err


def test_study_layer_imports_no_ui_torch_or_scheduler_up_front():
    probe = ("import sys, quizprep.study, quizprep.study.store, quizprep.study.session, "
             "quizprep.study.stats, quizprep.study.report, quizprep.cli.progress; "
             "print(sorted(m for m in ('textual', 'torch', 'fsrs', 'rich', 'platformdirs') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
