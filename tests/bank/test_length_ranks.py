"""The key's length rank (`quizprep.bank.length_ranks`): a bank whose keys sit at one rank far
beyond chance is flagged, per bank beyond luck and over all banks by the margin alone."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from quizprep.bank import load_banks
from quizprep.bank.length_ranks import length_rank_cues, length_ranks, rank_figures


def _bank(path: Path, topic: str, keys: list[tuple[str, list[str]]]) -> Path:
    """A bank of single-answer questions, each a key and its wrong options."""
    lines = [f"topic: {topic}", f"title: {topic}", "questions:"]
    for number, (key, wrong) in enumerate(keys):
        lines += [f"  - id: {topic}-{number}", "    kind: choice", "    difficulty: 1", "    tags: []",
                  f"    prompt: Question {number} of {topic}?", "    explanation: Because.",
                  '    references: ["Vaswani et al. 2017, §3.2.1"]', "    choices:",
                  f'      - text: "{key}"', "        correct: true", "        why: Right."]
        lines += [line for text in wrong for line in (f'      - text: "{text}"', "        why: Wrong.")]
    path.write_text("\n".join(lines) + "\n")
    return path


SECOND = ("key of medium size", ["a much longer wrong option here", "short one", "tiny"])  # key 2nd longest
SPREAD = [("a key that is the longest one", ["wrong number one", "wrong two", "w3"]),  # 1st
          SECOND,
          ("key text", ["a much longer wrong option", "another long wrong one", "short"]),  # 3rd
          ("k", ["a longer wrong option", "wrong option", "wrong"])]  # 4th


def test_one_rank_holding_every_key_of_a_bank_is_flagged(tmp_path: Path) -> None:
    bank = _bank(tmp_path / "second.yaml", "second", [SECOND] * 6)
    [warning] = length_rank_cues(load_banks([bank]).questions)
    assert warning.file == str(bank) and warning.id is None
    assert "the correct option is the second longest in 6 of 6 single-answer questions in this bank" in warning.message
    assert "(100%; chance 25%, limit 35%)" in warning.message


def test_keys_spread_over_the_ranks_give_no_warning(tmp_path: Path) -> None:
    bank = _bank(tmp_path / "spread.yaml", "spread", SPREAD * 2)
    questions = load_banks([bank]).questions
    assert list(length_rank_cues(questions)) == []
    assert [figure.count for figure in rank_figures(questions)] == [2, 2, 2, 2]


def test_a_small_bank_is_not_flagged_for_what_luck_explains(tmp_path: Path) -> None:
    # Two keys of four at one rank: 50 % against a limit of 35 %, but a 26 % chance at random.
    bank = _bank(tmp_path / "small.yaml", "small", [SECOND, SECOND, SPREAD[0], SPREAD[2]])
    [second] = [f for f in rank_figures(load_banks([bank]).questions) if f.rank == 2]
    assert second.over_margin and 0.2 < second.luck < 0.3
    assert list(length_rank_cues(load_banks([bank]).questions)) == []


def test_over_all_banks_the_margin_alone_decides(tmp_path: Path) -> None:
    # Each bank alone is within luck (two of four); together eight of sixteen are second longest.
    paths = [_bank(tmp_path / f"b{n}.yaml", f"b{n}", [SECOND, SECOND, SPREAD[0], SPREAD[2]]) for n in range(4)]
    [warning] = length_rank_cues(load_banks(paths).questions)
    assert warning.file == str(tmp_path) and warning.line == 0
    assert "second longest in 8 of 16 single-answer questions over the 4 banks" in warning.message
    assert str(warning).startswith(f"{tmp_path}: the correct option")


def test_options_of_equal_length_share_their_ranks(tmp_path: Path) -> None:
    bank = _bank(tmp_path / "tied.yaml", "tied", [("True False", ["False True", "True True", "False False"])])
    [question] = load_banks([bank]).questions
    # "False False" is longest; the key ties with "False True" for second and third.
    assert length_ranks(question) == {2: 0.5, 3: 0.5}  # type: ignore[arg-type]


def test_the_benchmark_reports_every_rank(tmp_path: Path) -> None:
    bank = _bank(tmp_path / "second.yaml", "second", [SECOND] * 6)
    run = subprocess.run([sys.executable, "benchmarks/option_lengths.py", str(bank)], capture_output=True, text=True,
                         cwd=Path(__file__).parents[2], check=True)
    assert "second longest:   6.0 (100.0%); chance 25.0%, limit 35.0%: OVER" in run.stdout
    assert "fourth longest:   0.0 (0.0%)" in run.stdout
    assert "second.yaml: second longest past the limit beyond luck" in run.stdout
