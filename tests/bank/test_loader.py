"""One bad file per error class: each error names file:line, the question id and the problem."""
from __future__ import annotations

from pathlib import Path

import pytest

from quizprep.bank import load_banks
from quizprep.bank.model import ChoiceQuestion, FreeQuestion, NumericQuestion

DATA = Path(__file__).parent / "data"

CHOICE = """\
  - id: q-one
    kind: choice
    difficulty: 1
    tags: [a]
    prompt: Pick one.
    explanation: Because.
    references: [ref]
    choices:
      - text: right
        correct: true
        why: it is right
      - text: wrong
        why: it is wrong
"""

NUMERIC = """\
  - id: q-num
    kind: numeric
    difficulty: 2
    tags: [a]
    prompt: How many bytes for {{n}} tokens?
    explanation: n times two.
    references: [ref]
    params:
      n: {range: [1, 8]}
    answer: 2 * n
    unit: B
    tolerance: 0.01
"""


def write_bank(tmp_path: Path, body: str, name: str = "bank.yaml", topic: str = "t") -> Path:
    path = tmp_path / name
    path.write_text(f"topic: {topic}\ntitle: T\nquestions:\n{body}")
    return path


def only_error(tmp_path: Path, body: str) -> tuple[str, int, str | None, str]:
    result = load_banks([write_bank(tmp_path, body)])
    assert len(result.errors) >= 1, "expected an error"
    error = result.errors[0]
    return error.file, error.line, error.id, error.message


def test_valid_sample_bank_loads_every_kind() -> None:
    result = load_banks([DATA / "valid.yaml"])
    assert result.errors == []
    kinds = {type(q) for q in result.questions}
    assert kinds == {ChoiceQuestion, NumericQuestion, FreeQuestion}
    numeric = next(q for q in result.questions if isinstance(q, NumericQuestion))
    assert numeric.generated and numeric.display_unit == "GiB"


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("topic: t\ntitle: T\nquestions:\n  - id: x\n    prompt: [unclosed\n")
    error = load_banks([path]).errors[0]
    assert error.file == str(path)
    assert error.line in (5, 6)
    assert "YAML syntax error" in error.message


def test_tabs_get_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "tabs.yaml"
    path.write_text("topic: t\ntitle: T\nquestions:\n\t- id: x\n")
    error = load_banks([path]).errors[0]
    assert error.line == 4 and "tabs" in error.message


def test_missing_field_names_the_question(tmp_path: Path) -> None:
    file, line, qid, message = only_error(tmp_path, CHOICE.replace("    explanation: Because.\n", ""))
    assert (line, qid) == (4, "q-one")
    assert "missing required field 'explanation'" in message


def test_unknown_field_suggests_the_close_one(tmp_path: Path) -> None:
    _, line, qid, message = only_error(tmp_path, CHOICE.replace("explanation:", "explanaton:"))
    assert qid == "q-one" and line == 9
    assert "unknown field 'explanaton'" in message and "did you mean 'explanation'" in message


def test_wrong_type_is_reported(tmp_path: Path) -> None:
    _, line, qid, message = only_error(tmp_path, CHOICE.replace("difficulty: 1", "difficulty: hard"))
    assert (line, qid) == (6, "q-one") and "difficulty must be 1, 2 or 3" in message


def test_duplicate_ids_across_files_name_the_first(tmp_path: Path) -> None:
    first = write_bank(tmp_path, CHOICE, "a.yaml")
    second = write_bank(tmp_path, CHOICE, "b.yaml")
    result = load_banks([first, second])
    assert [e.id for e in result.errors] == ["q-one"]
    assert result.errors[0].file == str(second)
    assert f"already defined at {first}:4" in result.errors[0].message
    assert len(result.questions) == 1


def test_choice_without_a_correct_answer(tmp_path: Path) -> None:
    _, _, qid, message = only_error(tmp_path, CHOICE.replace("        correct: true\n", ""))
    assert qid == "q-one" and "no choice is marked correct" in message


def test_choice_correct_flag_must_be_boolean(tmp_path: Path) -> None:
    _, line, _, message = only_error(tmp_path, CHOICE.replace("correct: true", "correct: 2"))
    assert line == 13 and "'correct' must be true or false" in message


def test_formula_with_unknown_parameter(tmp_path: Path) -> None:
    _, line, qid, message = only_error(tmp_path, NUMERIC.replace("2 * n", "2 * n * heads"))
    assert (line, qid) == (13, "q-num") and "unknown parameter(s): heads" in message


def test_formula_that_fails_for_some_draw(tmp_path: Path) -> None:
    _, _, qid, message = only_error(tmp_path, NUMERIC.replace("2 * n", "2 / (n - 3)"))
    assert qid == "q-num" and "fails for the draw n=3" in message


def test_formula_outside_the_whitelist(tmp_path: Path) -> None:
    _, _, _, message = only_error(tmp_path, NUMERIC.replace("2 * n", "__import__('os').getcwd()"))
    assert "only these functions may be called" in message


def test_typed_in_answer_is_rejected(tmp_path: Path) -> None:
    _, _, _, message = only_error(tmp_path, NUMERIC.replace("answer: 2 * n", "answer: 16"))
    assert "not a typed-in number" in message


def test_missing_tolerance(tmp_path: Path) -> None:
    _, _, qid, message = only_error(tmp_path, NUMERIC.replace("    tolerance: 0.01\n", ""))
    assert qid == "q-num" and "missing required field 'tolerance'" in message


def test_unknown_placeholder(tmp_path: Path) -> None:
    _, line, _, message = only_error(tmp_path, NUMERIC.replace("{{n}}", "{{tokens}}"))
    assert line == 8 and "{{tokens}}" in message


def test_empty_rubric(tmp_path: Path) -> None:
    body = """\
  - id: q-free
    kind: free
    difficulty: 3
    tags: []
    prompt: Explain.
    explanation: See model answer.
    references: [ref]
    model_answer: An answer.
    rubric: []
"""
    _, line, qid, message = only_error(tmp_path, body)
    assert (line, qid) == (12, "q-free") and "'rubric' needs 3–8 rubric items, got 0" in message


def test_chain_to_unknown_id(tmp_path: Path) -> None:
    body = CHOICE.replace("    tags: [a]\n", "    tags: [a]\n    chain: [nowhere]\n")
    _, _, qid, message = only_error(tmp_path, body)
    assert qid == "q-one" and "no question has id 'nowhere'" in message


def test_one_bad_question_does_not_hide_the_others(tmp_path: Path) -> None:
    bad_one = CHOICE.replace("difficulty: 1", "difficulty: 9")
    bad_two = NUMERIC.replace("unit: B", "unit: parsecs")
    result = load_banks([write_bank(tmp_path, bad_one + bad_two + CHOICE.replace("q-one", "q-ok"))])
    assert {e.id for e in result.errors} == {"q-one", "q-num"}
    assert [q.id for q in result.questions] == ["q-ok"]


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    duplicated = CHOICE.replace("    prompt: Pick one.\n", "    prompt: A\n    prompt: B\n")
    _, line, _, message = only_error(tmp_path, duplicated)
    assert line == 9 and "duplicate key 'prompt'" in message


def test_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 12):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    error = load_banks([path]).errors[0]
    assert "anchors and aliases" in error.message and error.line == 1


def test_python_tags_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "tag.yaml"
    path.write_text("topic: t\ntitle: !!python/object:os.system echo\nquestions: []\n")
    error = load_banks([path]).errors[0]
    assert error.line == 2 and "tags" in error.message


def test_several_documents_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "docs.yaml"
    path.write_text("topic: t\n---\ntopic: u\n")
    assert "one YAML document" in load_banks([path]).errors[0].message


def test_huge_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text("topic: t\n" + "#" * (3 * 1024 * 1024))
    assert "banks are limited" in load_banks([path]).errors[0].message


@pytest.mark.parametrize("payload", [b"\x00\x01\x02binary", b"topic: t\n\xff\xfe\xfd"])
def test_binary_garbage(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "garbage.yaml"
    path.write_bytes(payload)
    error = load_banks([path]).errors[0]
    assert "NUL" in error.message or "not UTF-8" in error.message


@pytest.mark.parametrize("text", ["topic: " + "[" * 100_000 + "]" * 100_000, "- " * 300_000 + "x"])
def test_deep_nesting(tmp_path: Path, text: str) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    assert "nested deeper than" in load_banks([path]).errors[0].message


def test_top_level_must_be_a_bank(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    assert "a bank is a mapping" in load_banks([path]).errors[0].message
