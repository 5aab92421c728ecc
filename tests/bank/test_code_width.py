"""Code lines too wide for an 80-column screen (`quizprep.bank.code_width`): Textual shows a fenced
code block without reflowing it, so a line past the 74 columns it has there was cut at the edge
(now it wraps mid-expression). `quizprep check` warns about each such line; prose may be longer."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from quizprep.bank import load_banks
from quizprep.bank.code_width import MAX_CODE_WIDTH, code_width_warnings, wide_code_lines

LONG_CODE = "block_table = torch.tensor([7, 2, 9])   # logical block i of this sequence -> physical block"
SHORT_CODE = "block_table = torch.tensor([7, 2, 9])"
LONG_PROSE = ("A paged KV cache maps each sequence's logical blocks to physical blocks through a block "
              "table, so a token's slot is its physical block times the block size plus its offset.")
BANK = """\
topic: paging
title: Paged caches
questions:
  - id: paging-slot-code
    kind: choice
    difficulty: 1
    tags: [code]
    references: ["Kwon et al. 2023, vLLM"]
    prompt: |
      PROSE

      ```python
      CODE
      print(block_table[1].item())
      ```
    explanation: The table maps logical block 1 to physical block 2.
    choices:
      - text: "2"
        correct: true
        why: The second entry of the table.
      - text: "7"
        why: That is logical block 0.
"""


def write_bank(tmp_path: Path, code: str, prose: str = "What does this print?") -> Path:
    bank = tmp_path / "paging.yaml"
    bank.write_text(BANK.replace("PROSE", prose).replace("CODE", code))
    return bank


def test_a_long_code_line_is_flagged_at_the_question_with_its_line_and_length(tmp_path: Path) -> None:
    bank = write_bank(tmp_path, LONG_CODE)
    [warning] = code_width_warnings(load_banks([bank]).questions)
    assert (warning.file, warning.line, warning.id) == (str(bank), 4, "paging-slot-code")
    assert warning.message.startswith(f"line 4 of the prompt: a code line of {len(LONG_CODE)} characters, "
                                      f"over {MAX_CODE_WIDTH}, wraps on an 80-column screen")
    assert str(warning).startswith(f"{bank}:4: [paging-slot-code] line 4 of the prompt")


def test_a_short_code_line_and_long_prose_are_not_flagged(tmp_path: Path) -> None:
    assert len(LONG_PROSE) > MAX_CODE_WIDTH
    bank = write_bank(tmp_path, SHORT_CODE, prose=LONG_PROSE)
    assert list(code_width_warnings(load_banks([bank]).questions)) == []


def test_only_lines_inside_a_fence_count() -> None:
    wide = "x" * (MAX_CODE_WIDTH + 1)
    fits = "y" * MAX_CODE_WIDTH
    text = "\n".join([wide, "```python", fits, wide, "```", wide, "~~~~", wide, "~~~", "```", wide, "~~~~",
                      wide, "```", wide])
    # Lines 4, 8, 11 and 15 are code: ``` does not close a ~~~~ fence, nor ~~~ a longer one, and
    # a fence left open runs to the end of the text.
    assert [number for number, _ in wide_code_lines(text)] == [4, 8, 11, 15]
    assert list(wide_code_lines(f"```\n{fits}\n```")) == []


def test_the_check_reports_it_and_strict_fails(tmp_path: Path) -> None:
    bank = write_bank(tmp_path, LONG_CODE)
    run = subprocess.run([sys.executable, "-m", "quizprep", "check", str(bank)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"warning: {bank}:4: [paging-slot-code] line 4 of the prompt: a code line of" in run.stdout
    strict = subprocess.run([sys.executable, "-m", "quizprep", "check", str(bank), "--strict"],
                            capture_output=True, text=True)
    assert strict.returncode == 1


def test_the_shipped_banks_have_no_code_line_too_wide() -> None:
    assert [str(warning) for warning in code_width_warnings(load_banks().questions)] == []
