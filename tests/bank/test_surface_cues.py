"""Surface features that tell right options from wrong ones (`quizprep.bank.surface_cues`): final
punctuation, opening words, and over the banks the odd one out by its opening. Warnings of
`quizprep check`, errors with `--strict`; the shipped banks have none."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from quizprep.bank import ChoiceQuestion, load_banks
from quizprep.bank.surface_cues import (
    final_mark, odd_one_out, odd_one_out_figure, opening, opening_rank_cues, separating_opening, surface_cues,
)

RESULT = load_banks()
CHOICE = [q for q in RESULT.questions if isinstance(q, ChoiceQuestion)]


def _question(qid: str, options: list[tuple[str, bool]]) -> list[str]:
    lines = [f"  - id: {qid}", "    kind: choice", "    difficulty: 1", "    tags: []",
             f"    prompt: Question {qid}?", "    explanation: Because.", '    references: ["Vaswani et al. 2017"]',
             "    choices:"]
    for text, correct in options:
        lines += [f"      - text: {json.dumps(text)}"] + (["        correct: true"] if correct else [])
        lines += ["        why: Because."]
    return lines


def _bank(path: Path, questions: dict[str, list[tuple[str, bool]]]) -> Path:
    lines = ["topic: surface", "title: Surface cues", "questions:"]
    for qid, options in questions.items():
        lines += _question(qid, options)
    path.write_text("\n".join(lines) + "\n")
    return path


CUES = {
    # select-all: the keys end bare, every wrong option with a full stop
    "cue-stop": [("Rows no longer sum to 1", True), ("Future keys leak in via the denominator", True),
                 ("Nothing changes, it is only slower.", False), ("It produces NaN in the first row.", False)],
    # three "Yes: …" against the key "No: …"
    "cue-yes-no": [("Yes: it skips small scores", False), ("Yes: it uses a low-rank product", False),
                   ("Yes: each block has its own maximum", False), ("No: it is exact up to rounding", True)],
    # the first word is shared; the second tells the key
    "cue-two-words": [("The wrong elements: the layout is assumed", True),
                      ("The right elements: Triton copies inputs", False),
                      ("The right elements, since the last stride is 1", False)],
    "fair": [("The key axis", True), ("The query axis", False), ("The batch axis", False)],
    "fair-yes-no": [("Yes: it is exact up to rounding", False), ("Yes, bit for bit", False),
                    ("No: it skips small scores", False), ("No: it is exact up to rounding errors", True)],
}


def warnings_by_id(path: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for question in load_banks([path]).questions:
        assert isinstance(question, ChoiceQuestion)
        for warning in surface_cues(question):
            found.setdefault(question.id, []).append(warning.message)
    return found


def test_each_surface_cue_is_flagged_on_its_question_and_fair_ones_are_not(tmp_path: Path) -> None:
    found = warnings_by_id(_bank(tmp_path / "cues.yaml", CUES))
    assert set(found) == {"cue-stop", "cue-yes-no", "cue-two-words"}
    [stop] = found["cue-stop"]
    assert "the correct option(s) end without a mark, every wrong one with '.'" in stop
    [yes_no] = found["cue-yes-no"]
    assert "every wrong option opens with 'yes' and no correct one does" in yes_no
    [two_words] = found["cue-two-words"]
    assert "every wrong option opens with 'the right' and no correct one does" in two_words


def test_the_check_reports_them_at_the_question_and_strict_fails(tmp_path: Path) -> None:
    bank = _bank(tmp_path / "cues.yaml", CUES)
    run = subprocess.run([sys.executable, "-m", "quizprep", "check", str(bank), "--strict", "--json"],
                         capture_output=True, text=True)
    assert run.returncode == 1
    errors = json.loads(run.stdout)["errors"]
    lines = {question.id: question.source.line for question in load_banks([bank]).questions}
    assert {(e["id"], e["line"]) for e in errors if "the answer away" in e["message"]} == {
        (qid, lines[qid]) for qid in ("cue-stop", "cue-yes-no", "cue-two-words")}


def test_marks_and_openings_are_read_as_a_reader_sees_them() -> None:
    assert [final_mark(t) for t in ("ends here.", "ends here", "what?", "i, i + h, …", "(see below)")] == [
        ".", "", "?", "…", ""]
    assert opening("Yes: it is exact", 2) == ("yes", "it")
    assert opening("`True`: SDPA keeps it", 1) == ("true",)
    assert opening("-inf -200.0", 1) == ("-inf",)
    assert separating_opening(["It lets a block keep O"], ["It lets K stay", "It reduces FLOPs"]) is None


def test_the_odd_one_out_is_the_option_whose_opening_differs_from_all_the_others(tmp_path: Path) -> None:
    by_id = {q.id: q for q in load_banks([_bank(tmp_path / "cues.yaml", CUES)]).questions
             if isinstance(q, ChoiceQuestion)}
    assert odd_one_out(by_id["cue-yes-no"].choices) == 3
    assert odd_one_out(by_id["cue-two-words"].choices) == 0  # told apart by the second word
    assert odd_one_out(by_id["fair-yes-no"].choices) is None  # two "Yes", two "No"
    assert odd_one_out(by_id["fair"].choices) is None  # all open with "The", then all differ


SELECT_ALL_ODD_RIGHT = [("The cache grows", False), ("The scores grow", True), ("The weights grow", False),
                        ("Nothing else grows", True)]
SELECT_ALL_ODD_WRONG = [("The cache grows", True), ("The scores grow", False), ("The weights grow", True),
                        ("Nothing else grows", False)]


def test_an_odd_one_out_that_is_right_too_often_is_flagged_over_the_banks(tmp_path: Path) -> None:
    # No single question separates right from wrong, but the odd one out is always a key.
    bank = _bank(tmp_path / "odd.yaml", {f"odd-{n}": SELECT_ALL_ODD_RIGHT for n in range(12)})
    questions = load_banks([bank]).questions
    assert not [w for q in questions if isinstance(q, ChoiceQuestion) for w in surface_cues(q)]
    [warning] = opening_rank_cues(questions)
    assert warning.file == str(bank) and warning.id is None
    assert "correct in 12 of 12 questions (100%; chance 50%)" in warning.message


def test_an_odd_one_out_at_chance_is_not_flagged(tmp_path: Path) -> None:
    mixed = {f"odd-{n}": SELECT_ALL_ODD_RIGHT if n % 2 else SELECT_ALL_ODD_WRONG for n in range(12)}
    questions = load_banks([_bank(tmp_path / "odd.yaml", mixed)]).questions
    figure = odd_one_out_figure(questions)
    assert (figure.correct, figure.questions, figure.chance) == (6, 12, 6.0)
    assert list(opening_rank_cues(questions)) == []


@pytest.mark.parametrize("question", CHOICE, ids=lambda q: q.id)
def test_no_shipped_question_is_answered_by_its_surface(question: ChoiceQuestion) -> None:
    assert [warning.message for warning in surface_cues(question)] == []


def test_over_the_shipped_banks_the_odd_one_out_is_right_no_more_often_than_chance() -> None:
    figure = odd_one_out_figure(RESULT.questions)
    assert figure.questions >= 10  # enough questions have an odd one out for the figure to mean something
    assert figure.correct <= figure.chance, (figure.correct, figure.questions, figure.chance)
