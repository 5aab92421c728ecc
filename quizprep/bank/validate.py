"""Validate one bank file: every problem becomes a BankError with file:line and id, and one bad
question never hides the others. Only a cold load imports this (the quiz app's start-up reads the
validated-bank cache)."""
from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any, Iterable, TypeVar

from quizprep.bank import values
from quizprep.bank.formula import Formula, FormulaError, parse_formula
from quizprep.bank.linedict import LineDict
from quizprep.bank.model import (
    Bank, BankError, Choice, ChoiceQuestion, FreeQuestion, NumericQuestion, ParamSpec, Question,
    RubricItem, Source, Tolerance, WrongAnswer,
)
from quizprep.bank.numeric import PLACEHOLDER, evaluate_draw
from quizprep.bank.units import UNITS, UnitError, scale_of
from quizprep.bank.yamlio import YamlProblem, read_yaml

FieldValue = TypeVar("FieldValue")
ID_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")  # always used with fullmatch
# Choices are shown in a fresh order each time, so text that points at a choice by its place
# ("all of the above", "the last choice") would point at the wrong one.
BY_PLACE = re.compile(r"\b(?:(?:all|none|both|neither|either|any) of the (?:above|below|previous|others)"
                      r"|(?:first|second|third|fourth|fifth|sixth|last|previous|next) (?:choice|option)"
                      r"|(?:choices?|options?) [A-F1-6](?: and [A-F1-6])?)\b", re.IGNORECASE)

COMMON_REQUIRED = ("id", "kind", "difficulty", "tags", "prompt", "explanation", "references")
COMMON_OPTIONAL = ("topic", "pitfalls", "follow_ups", "chain", "aliases")
KIND_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "choice": (("choices",), ("shuffle",)),
    "numeric": (("params", "answer", "unit", "tolerance"), ("derived", "display_unit", "wrong_answers")),
    "free": (("model_answer", "rubric"), ()),
}
BANK_FIELDS = ("topic", "title", "questions")


def read_bank(path: Path) -> tuple[Bank | None, list[BankError]]:
    """Parse and validate one bank file: the bank of its valid questions, and every problem found."""
    name = str(path)
    try:
        data = read_yaml(path)
    except YamlProblem as problem:
        return None, [BankError(name, problem.line, None, problem.message)]
    except OSError as error:
        return None, [BankError(name, 1, None, f"cannot read: {error.strerror or error}")]
    if not isinstance(data, LineDict):
        return None, [BankError(name, 1, None, "a bank is a mapping with keys topic, title, questions")]
    errors = [
        BankError(name, data.line_of(key), None, _unknown_field_message(key, BANK_FIELDS))
        for key in data if key not in BANK_FIELDS
    ]
    topic = _required(data, "topic", str, name, errors)
    title = _required(data, "title", str, name, errors)
    items = _required(data, "questions", list, name, errors)
    if errors or topic is None or title is None or items is None:
        return None, errors
    readers = [_QuestionReader(name, topic, item, data.line_of("questions")) for item in items]
    read = [(reader, reader.read()) for reader in readers]
    numeric = [(reader, q) for reader, q in read if isinstance(q, NumericQuestion)]
    granted = values.share_draws([(values.draw_count(q.params), values.draw_cost(q.params, _steps(q)))
                                  for _, q in numeric])
    failed = {id(q) for (reader, q), draws in zip(numeric, granted) if not reader.check_draws(q, draws)}
    for reader in readers:
        errors.extend(reader.errors)
    questions = tuple(q for _, q in read if q is not None and id(q) not in failed)
    return Bank(topic, title, name, questions), errors


def _required(data: LineDict, key: str, kind: type[FieldValue], file: str,
              errors: list[BankError]) -> FieldValue | None:
    """The bank's field `key` when it is a non-empty `kind`; else None, with an error added."""
    value = data.get(key)
    if isinstance(value, kind) and value:
        return value
    errors.append(BankError(file, data.line_of(key), None, f"bank needs a non-empty {key!r}"))
    return None


def _steps(question: NumericQuestion) -> int:
    """Formula steps evaluated per draw of a question."""
    formulas = [f for _, f in question.derived] + [question.answer] + [w.formula for w in question.wrong_answers]
    return sum(f.size for f in formulas if f is not None)


def _unknown_field_message(key: Any, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(str(key), list(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown field {key!r}{hint}"


class _QuestionReader:
    """Validates one question mapping, collecting every error rather than stopping at the first."""

    def __init__(self, file: str, topic: str, data: Any, fallback_line: int) -> None:
        self.file = file
        self.topic = topic
        self.data = data
        self.line = data.line if isinstance(data, LineDict) else fallback_line
        self.id: str | None = None
        self.errors: list[BankError] = []

    def error(self, message: str, key: str | None = None) -> None:
        line = self.data.line_of(key) if key is not None and isinstance(self.data, LineDict) else self.line
        self.errors.append(BankError(self.file, line, self.id, message))

    def read(self) -> Question | None:
        if not isinstance(self.data, LineDict):
            self.error("each question is a mapping of fields")
            return None
        qid = self.data.get("id")
        self.id = qid if isinstance(qid, str) else None
        if not isinstance(qid, str) or not ID_PATTERN.fullmatch(qid):
            self.error("id must be lowercase letters, digits and dashes, e.g. scaling-why-sqrt-dk", "id")
        kind = self.data.get("kind")
        if not isinstance(kind, str) or kind not in KIND_FIELDS:
            self.error(f"kind must be one of {', '.join(KIND_FIELDS)}, got {kind!r}", "kind")
            return None
        required, optional = KIND_FIELDS[kind]
        allowed = COMMON_REQUIRED + COMMON_OPTIONAL + required + optional
        for key in self.data:
            if key not in allowed:
                self.error(_unknown_field_message(key, allowed), key)
        for key in COMMON_REQUIRED + required:
            if key not in self.data:
                self.error(f"missing required field {key!r}")
        common = self.common_fields()
        specific = {"choice": self.choice_fields, "numeric": self.numeric_fields, "free": self.free_fields}[kind]()
        if self.errors or specific is None or common is None:  # any error skips the question
            return None
        cls = {"choice": ChoiceQuestion, "numeric": NumericQuestion, "free": FreeQuestion}[kind]
        return cls(**common, **specific)

    # -- field readers -------------------------------------------------------------------

    def text(self, key: str, data: LineDict | None = None, required: bool = True) -> str:
        data = self.data if data is None else data
        value = data.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str) or not value.strip():
            if key in data or required:
                self.error(f"{key!r} must be non-empty text", key)
            return ""
        return value.strip()

    def text_list(self, key: str, required: bool = False, nonempty: bool = False) -> tuple[str, ...]:
        value = self.data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.error(f"{key!r} must be a list of non-empty strings", key)
            return ()
        if nonempty and not value:
            self.error(f"{key!r} needs at least one entry", key)
        return tuple(v.strip() for v in value)

    def common_fields(self) -> dict[str, Any] | None:
        difficulty = self.data.get("difficulty")
        if not isinstance(difficulty, int) or isinstance(difficulty, bool) or not 1 <= difficulty <= 3:
            self.error(f"difficulty must be 1, 2 or 3, got {difficulty!r}", "difficulty")
        topic = self.data.get("topic", self.topic)
        if topic != self.topic:
            self.error(f"topic {topic!r} differs from the bank's topic {self.topic!r}", "topic")
        if "tags" in self.data and not isinstance(self.data["tags"], list):
            self.error("'tags' must be a list", "tags")
        chain, aliases = self.text_list("chain"), self.text_list("aliases")
        for key, ids in (("chain", chain), ("aliases", aliases)):
            for target in ids:
                if not ID_PATTERN.fullmatch(target) or target == self.id:
                    self.error(f"{key} entry {target!r} is not another question's id", key)
        return dict(
            id=self.id or "", topic=self.topic, difficulty=difficulty,
            tags=self.text_list("tags"), prompt=self.text("prompt"),
            explanation=self.text("explanation"),
            references=self.text_list("references", nonempty=True),
            pitfalls=self.text_list("pitfalls"), follow_ups=self.text_list("follow_ups"),
            chain=chain, source=Source(self.file, self.line), aliases=aliases,
        )

    def entries(self, key: str, low: int, high: int, what: str) -> list[LineDict]:
        value = self.data.get(key)
        if not isinstance(value, list) or not low <= len(value) <= high:
            count = len(value) if isinstance(value, list) else "no list"
            self.error(f"{key!r} needs {low}–{high} {what}, got {count}", key)
            return []
        good = [v for v in value if isinstance(v, LineDict)]
        if len(good) != len(value):
            self.error(f"every entry of {key!r} is a mapping", key)
        return good

    def choice_fields(self) -> dict[str, Any] | None:
        self.placeholders_forbidden()
        choices = []
        for entry in self.entries("choices", 2, 6, "choices"):
            for key in entry:
                if key not in ("text", "correct", "why"):
                    self.errors.append(BankError(self.file, entry.line_of(key), self.id,
                                                 _unknown_field_message(key, ("text", "correct", "why"))))
            correct = entry.get("correct", False)
            if not isinstance(correct, bool):
                self.errors.append(BankError(self.file, entry.line_of("correct"), self.id,
                                             f"'correct' must be true or false, got {correct!r}"))
            choices.append(Choice(self.text("text", entry), correct is True, self.text("why", entry)))
        if choices and not any(c.correct for c in choices):
            self.error("no choice is marked correct: true", "choices")
        if len({c.text for c in choices}) != len(choices):
            self.error("two choices have the same text", "choices")
        shuffle = self.data.get("shuffle", True)
        if not isinstance(shuffle, bool):
            self.error(f"'shuffle' must be true or false, got {shuffle!r}", "shuffle")
        elif shuffle:
            self.refuse_places(choices)
        return {"choices": tuple(choices), "shuffle": shuffle is not False}

    def refuse_places(self, choices: Iterable[Choice]) -> None:
        texts = [self.data.get("explanation")] + [part for c in choices for part in (c.text, c.why)]
        found = next((match for text in texts if isinstance(text, str) and (match := BY_PLACE.search(text))), None)
        if found:
            self.error(f"{found.group(0)!r} points at a choice by its place, but choices are shuffled for "
                       f"each showing: name the choice by its content, or add 'shuffle: false'", "choices")

    def free_fields(self) -> dict[str, Any] | None:
        self.placeholders_forbidden()
        rubric = []
        for entry in self.entries("rubric", 3, 8, "rubric items"):
            written = entry.get("weight")
            try:
                weight = values.number(written)
                if weight <= 0:
                    raise ValueError
            except ValueError:
                self.errors.append(BankError(self.file, entry.line_of("weight"), self.id,
                                             f"rubric weight must be a finite positive number, got {written!r}"))
                weight = 0
            rubric.append(RubricItem(self.text("criterion", entry), float(weight)))
        return {"model_answer": self.text("model_answer"), "rubric": tuple(rubric)}

    def placeholders_forbidden(self) -> None:
        for key in ("prompt", "explanation"):
            value = self.data.get(key)
            if isinstance(value, str) and PLACEHOLDER.search(value):
                self.error("{{name}} placeholders only work in numeric questions", key)

    # -- numeric ---------------------------------------------------------------------------

    def numeric_fields(self) -> dict[str, Any] | None:
        params = self.params()
        derived = self.derived(params)
        answer = self.formula(self.data.get("answer"), "answer")
        unit = self.data.get("unit")
        if unit not in UNITS:
            self.error(f"unit must be one of {', '.join(repr(u) for u in UNITS)}, got {unit!r}", "unit")
            unit = ""
        display_unit = self.display_unit(unit)
        tolerance = self.tolerance()
        wrong = self.wrong_answers()
        if params is None or derived is None or answer is None or tolerance is None or wrong is None:
            return None
        if not answer.names:
            self.error("the answer must be a formula over the parameters, not a typed-in number", "answer")
            return None
        question = dict(params=params, derived=derived, answer=answer, unit=unit,
                        display_unit=display_unit, tolerance=tolerance, wrong_answers=wrong)
        self.check_names(question)  # the draws are checked once the whole file is read
        return question

    def params(self) -> tuple[ParamSpec, ...] | None:
        raw = self.data.get("params")
        if not isinstance(raw, LineDict) or not raw:
            self.error("'params' must be a mapping of names to values", "params")
            return None
        specs = []
        for name, value in raw.items():
            try:
                specs.append(ParamSpec(values.param_name(name), values.param_values(value)))
            except ValueError as error:
                self.errors.append(BankError(self.file, raw.line_of(name), self.id, f"param {name!r}: {error}"))
        return tuple(specs) if len(specs) == len(raw) else None

    def derived(self, params: tuple[ParamSpec, ...] | None) -> tuple[tuple[str, Formula], ...] | None:
        raw = self.data.get("derived")
        if raw is None:
            return ()
        if not isinstance(raw, LineDict):
            self.error("'derived' must be a mapping of names to formulas", "derived")
            return None
        steps = []
        for name, source in raw.items():
            formula = self.formula(source, "derived", label=f"derived {name!r}")
            try:
                steps.append((values.param_name(name), formula))
            except ValueError as error:
                self.error(f"derived {name!r}: {error}", "derived")
        complete = tuple((name, formula) for name, formula in steps if formula is not None)
        return complete if len(complete) == len(raw) else None

    def formula(self, source: Any, key: str, label: str | None = None) -> Formula | None:
        if isinstance(source, (int, float)) and not isinstance(source, bool):
            source = str(source)
        try:
            return parse_formula(source)
        except FormulaError as error:
            self.error(f"{label or key}: {error}", key)
            return None

    def display_unit(self, unit: str) -> str | None:
        value = self.data.get("display_unit")
        if value is None:
            return None
        try:
            scale_of(str(value), unit)
        except UnitError as error:
            self.error(f"display_unit: {error}", "display_unit")
            return None
        return str(value)

    def tolerance(self) -> Tolerance | None:
        try:
            return values.tolerance_from(self.data.get("tolerance"))
        except ValueError as error:
            self.error(str(error), "tolerance")
            return None

    def wrong_answers(self) -> tuple[WrongAnswer, ...] | None:
        raw = self.data.get("wrong_answers")
        if raw is None:
            return ()
        if not isinstance(raw, list) or not all(isinstance(e, LineDict) for e in raw):
            self.error("'wrong_answers' is a list of {formula, message}", "wrong_answers")
            return None
        wrong = []
        for entry in raw:
            formula = self.formula(entry.get("formula"), "wrong_answers", label="wrong answer formula")
            message = self.text("message", entry)
            if formula is not None and message:
                wrong.append(WrongAnswer(formula, message))
        return tuple(wrong) if len(wrong) == len(raw) else None

    def check_names(self, question: dict[str, Any]) -> bool:
        known = {p.name for p in question["params"]}
        ok = True
        for name, formula in question["derived"]:
            ok &= self.names_known(formula, known, "derived")
            known.add(name)
        ok &= self.names_known(question["answer"], known, "answer")
        known.add("answer")
        for wrong in question["wrong_answers"]:
            ok &= self.names_known(wrong.formula, known, "wrong_answers")
        for key in ("prompt", "explanation"):
            for name in PLACEHOLDER.findall(str(self.data.get(key, ""))):
                if name not in known:
                    self.error(f"placeholder {{{{{name}}}}} names no parameter or derived value", key)
                    ok = False
        return ok

    def names_known(self, formula: Formula, known: set[str], key: str) -> bool:
        unknown = sorted(formula.names - known)
        if unknown:
            self.error(f"{formula.source!r} uses unknown parameter(s): {', '.join(unknown)}", key)
        return not unknown

    def check_draws(self, question: NumericQuestion, draws: int) -> bool:
        """Evaluate every formula over `draws` draws; False (with an error) when one fails or
        results are not finite numbers, or when the file's work budget left too few draws."""
        if not draws:
            self.error(f"not checked: the numeric questions of this file need more formula work than "
                       f"one bank may use ({values.FILE_WORK_BUDGET:,} steps); split it into smaller files", "answer")
            return False
        assert question.answer is not None
        for draw in values.sample_draws(question.params, draws):
            try:
                env = evaluate_draw(question.derived, question.answer, draw)
                for wrong in question.wrong_answers:
                    wrong.formula.evaluate(env)
            except FormulaError as error:
                shown = ", ".join(f"{k}={v:g}" for k, v in draw.items())
                self.error(f"formula fails for the draw {shown}: {error}", "answer")
                return False
        return True
