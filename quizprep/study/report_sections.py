"""The report's sections beyond the progress statistics: the interview date with FSRS's predicted
recall per topic on it, exercise grades, mock interviews and multiple-choice answers missed (what
was picked against what was right). Each is gathered here and rendered as Markdown or HTML."""
from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from quizprep.bank.model import ChoiceQuestion, Question
from quizprep.study.overview import NO_DATA, percent
from quizprep.study.store import Answer, Store

if TYPE_CHECKING:
    from quizprep.study.grades import ExerciseStatus
    from quizprep.study.interview import Forecast

RECENT = 10
Table = Callable[[list[str], list[list[object]]], str]


@dataclass(frozen=True)
class ChoiceMiss:
    question_id: str
    answered_at: datetime
    prompt: str  # Markdown, as the bank has it (no placeholders in a choice question)
    picked: tuple[str, ...]
    right: tuple[str, ...]


@dataclass(frozen=True)
class MockResult:
    started_at: datetime
    answers: int
    score: float | None  # over the assessed answers and the questions left unanswered (0 each)
    skipped: int
    questions: int  # in the round, answered or not (the answers alone where the round never ended)


def interview_forecast(store: Store, questions: Sequence[Question], now: datetime, tz: tzinfo | None,
                       titles: Mapping[str, str]) -> Forecast | None:
    """The forecast for the interview date the learner set, unless none is set or it has passed."""
    from quizprep.study.interview import forecast, saved_date

    local = now.astimezone(tz)
    on = saved_date(store, local.date())
    return None if on is None else forecast(store, questions, on, local, titles)


def choice_misses(answers: Sequence[Answer], by_id: Mapping[str, Question]) -> list[ChoiceMiss]:
    """The latest multiple-choice answers that were wrong (not "don't know"), newest first."""
    misses = []
    for answer in reversed(answers):
        question = by_id.get(answer.question_id)
        if not isinstance(question, ChoiceQuestion) or answer.correct is not False or not answer.response:
            continue
        picked = [int(n) - 1 for n in answer.response.split(",") if n.isdigit()]
        texts = tuple(question.choices[i].text for i in picked if 0 <= i < len(question.choices))
        right = tuple(question.choices[i].text for i in sorted(question.correct_indices))
        misses.append(ChoiceMiss(question.id, answer.answered_at, question.prompt.strip(), texts, right))
        if len(misses) == RECENT:
            break
    return misses


def mock_results(answers: Sequence[Answer], planned: Mapping[int, int]) -> list[MockResult]:
    """Each mock interview with an answer, oldest first; a round ended before its last question
    (`planned`: its questions, by session) is scored over all of them, as in an interview."""
    rounds: dict[int | None, list[Answer]] = {}
    for answer in answers:
        if answer.mode == "mock":
            rounds.setdefault(answer.session_id, []).append(answer)
    results = []
    for given in rounds.values():
        scores = [a.score for a in given if a.score is not None]
        questions = max(len(given), planned.get(given[0].session_id or -1, 0))
        over = len(scores) + questions - len(given)  # the unassessed left out, the unanswered as 0
        results.append(MockResult(given[0].answered_at, len(given), sum(scores) / over if scores else None,
                                  sum(not a.response for a in given), questions))
    return results


def md_quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def days(count: int) -> str:
    return f"{count} day{'' if count == 1 else 's'}"


def readiness_rows(forecast: Forecast) -> list[list[object]]:
    return [[t.title, f"{t.seen} of {t.total}", percent(t.recall)] for t in forecast.topics]


def readiness_intro(forecast: Forecast | None) -> str:
    if forecast is None:
        return "No interview date set (`quizprep --interview 2026-12-15` or `--interview 'Dec 15'`, or `d` on Home)."
    when = "today" if forecast.days_left == 0 else f"in {days(forecast.days_left)}"
    return (f"Interview on {forecast.on.isoformat()} ({when}). FSRS's predicted recall on that morning, "
            "per topic, weakest first; a question never answered counts 0.")


def exercise_rows(exercises: Sequence[ExerciseStatus], local: Callable[[datetime], str]) -> list[list[object]]:
    return [[e.exercise, local(e.graded_at), percent(e.score),
             "passed" if e.passed else "; ".join(e.open_diagnoses) or "failed (no named mistake)"]
            for e in exercises]


def mock_rows(mocks: Sequence[MockResult], local: Callable[[datetime], str]) -> list[list[object]]:
    return [[local(m.started_at), m.answers if m.questions == m.answers else f"{m.answers} of {m.questions}",
             percent(m.score), m.skipped] for m in mocks]


READINESS_HEADER = ["Topic", "Seen", "Predicted recall"]
EXERCISE_HEADER = ["Exercise", "Last graded", "Score", "Result"]
MOCK_HEADER = ["Started", "Answers", "Score", "Don't know"]


def markdown_sections(forecast: Forecast | None, exercises: Sequence[ExerciseStatus], mocks: Sequence[MockResult],
                      misses: Sequence[ChoiceMiss], local: Callable[[datetime], str], table: Table) -> list[str]:
    out = ["## Interview readiness", "", readiness_intro(forecast), ""]
    if forecast is not None:
        out += [table(READINESS_HEADER, readiness_rows(forecast)), ""]
    out += ["## Exercises (`quizprep grade`)", "",
            table(EXERCISE_HEADER, exercise_rows(exercises, local)) if exercises else "None graded yet.", ""]
    out += ["## Mock interviews", "", table(MOCK_HEADER, mock_rows(mocks, local)) if mocks else "None yet.", ""]
    out += ["## Multiple-choice answers missed", ""]
    if not misses:
        out += ["None.", ""]
    for miss in misses:
        out += [f"### {miss.question_id} ({local(miss.answered_at)})", "", md_quote(miss.prompt), "",
                f"- picked: {'; '.join(miss.picked) or NO_DATA}", f"- right: {'; '.join(miss.right)}", ""]
    return out


def html_sections(forecast: Forecast | None, exercises: Sequence[ExerciseStatus], mocks: Sequence[MockResult],
                  misses: Sequence[ChoiceMiss], local: Callable[[datetime], str], table: Table) -> list[str]:
    e = html.escape
    parts = ["<h2>Interview readiness</h2>", f"<p>{e(readiness_intro(forecast))}</p>"]
    if forecast is not None:
        parts.append(table(READINESS_HEADER, readiness_rows(forecast)))
    parts += ["<h2>Exercises (quizprep grade)</h2>",
              table(EXERCISE_HEADER, exercise_rows(exercises, local)) if exercises else "<p>None graded yet.</p>",
              "<h2>Mock interviews</h2>", table(MOCK_HEADER, mock_rows(mocks, local)) if mocks else "<p>None yet.</p>",
              "<h2>Multiple-choice answers missed</h2>"]
    if not misses:
        parts.append("<p>None.</p>")
    for miss in misses:
        picked = "; ".join(miss.picked) or NO_DATA
        parts.append(f"<h3>{e(miss.question_id)} ({e(local(miss.answered_at))})</h3>"
                     f"<blockquote>{e(miss.prompt)}</blockquote><ul><li>picked: {e(picked)}</li>"
                     f"<li>right: {e('; '.join(miss.right))}</li></ul>")
    return parts
