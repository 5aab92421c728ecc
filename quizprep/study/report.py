"""A self-assessment report a learner can keep or show a coach, as Markdown or standalone HTML.

Numeric answers are shown with the exact numbers the learner saw, redrawn from the recorded seed.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from quizprep.bank.model import FreeQuestion, NumericQuestion, Question
from quizprep.study.report_sections import (
    ChoiceMiss, MockResult, choice_misses, days, html_sections, markdown_sections, md_quote, mock_results,
)
from quizprep.study.charts import ProgressCharts, progress_charts
from quizprep.study.clock import zone_text
from quizprep.study.stats import DEFINITIONS, Stats, compute_stats
from quizprep.study.overview import percent
from quizprep.study.store import RubricMark, Store

if TYPE_CHECKING:
    from quizprep.study.interview import Forecast

RECENT = 10
TOP_MISSED = 10


@dataclass(frozen=True)
class FreeResponse:
    question_id: str
    prompt: str
    answered_at: datetime
    response: str
    score: float
    marks: tuple[RubricMark, ...]


@dataclass(frozen=True)
class NumericMiss:
    question_id: str
    answered_at: datetime
    seed: int
    prompt: str
    response: str
    expected: str
    diagnosis: str | None
    worked: tuple[str, ...]


@dataclass(frozen=True)
class Report:
    stats: Stats
    free_responses: tuple[FreeResponse, ...]
    numeric_misses: tuple[NumericMiss, ...]
    tz: tzinfo | None = None
    forecast: Forecast | None = None  # the interview date's predicted recall, when one is set
    mocks: tuple[MockResult, ...] = ()
    choice_misses: tuple[ChoiceMiss, ...] = ()
    charts: ProgressCharts | None = None  # the pictures of the HTML report

    def local(self, moment: datetime) -> str:
        return moment.astimezone(self.tz).strftime("%Y-%m-%d %H:%M")

    def generated(self) -> str:
        """When the report was made, and the time zone of every time in it (the app's history
        says "times in UTC"; a report is in the learner's own zone)."""
        moment = self.stats.generated_at
        return f"Generated {self.local(moment)}; times in {zone_text(moment.astimezone(self.tz))}"


def build_report(store: Store, questions: Sequence[Question], *, now: datetime | None = None,
                 tz: tzinfo | None = None, titles: Mapping[str, str] | None = None) -> Report:
    from quizprep.bank.formula import FormulaError
    from quizprep.bank.numeric import fill_placeholders, judge, worked_steps
    from quizprep.study.builders import reproduce_draw

    now = now or datetime.now(timezone.utc)
    stats = compute_stats(store, questions, now=now, tz=tz, titles=titles)
    by_id = {q.id: q for q in questions}
    answers = store.answers()
    free: list[FreeResponse] = []
    for answer in reversed([a for a in answers if a.kind == "free" and a.assessed]):
        question = by_id.get(answer.question_id)
        if isinstance(question, FreeQuestion) and len(free) < RECENT:
            free.append(FreeResponse(question.id, question.prompt, answer.answered_at, answer.response,
                                     float(answer.score or 0.0), tuple(store.rubric_marks(answer.id))))
    misses: list[NumericMiss] = []
    for answer in reversed([a for a in answers if a.kind == "numeric" and a.correct is False]):
        question = by_id.get(answer.question_id)
        if isinstance(question, NumericQuestion) and answer.seed is not None and len(misses) < RECENT:
            try:
                draw = reproduce_draw(question, answer)
            except FormulaError:  # the bank changed since: no draw of this seed evaluates now
                continue
            verdict = judge(question, draw, answer.response)
            misses.append(NumericMiss(question.id, answer.answered_at, answer.seed,
                                      fill_placeholders(question.prompt, draw), answer.response,
                                      verdict.expected, verdict.diagnosis,
                                      tuple(worked_steps(question, draw))))
    charts = progress_charts(store, questions, now, tz, titles)
    return Report(stats, tuple(free), tuple(misses), tz, charts.forecast,
                  tuple(mock_results(answers, store.planned_questions())), tuple(choice_misses(answers, by_id)),
                  charts)


def write_report(path: str | Path, report: Report) -> Path:
    """Write Markdown (.md) or HTML (.html/.htm), chosen by the file's suffix."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".md":
        text = render_markdown(report)
    elif suffix in (".html", ".htm"):
        text = render_html(report)
    else:
        raise ValueError(f"{path.name}: the report is written as .md or .html, not {suffix or 'no suffix'!r}")
    path.write_text(text, encoding="utf-8")
    return path


# -- Markdown ------------------------------------------------------------------------------

def render_markdown(report: Report) -> str:
    stats = report.stats
    out = [
        "# quizprep self-assessment",
        "",
        f"{report.generated()}. {stats.total_answers} answers, "
        f"accuracy {percent(stats.accuracy)}, streak {days(stats.streak_days)}.",
        "",
        "## Topics",
        "",
        _md_table(["Topic", "Questions", "Seen", "Due", "Answers", "Accuracy", "Mastery"],
                  [[t.title, t.questions, t.seen, t.due, t.attempts, percent(t.accuracy), percent(t.mastery)]
                   for t in stats.topics]),
        "",
        *markdown_sections(report.forecast, stats.exercises, report.mocks, report.choice_misses, report.local,
                           _md_table),
        "## Rubric criteria missed most often",
        "",
    ]
    missed = stats.missed_criteria[:TOP_MISSED]
    out.append(_md_table(["Question", "Criterion", "Missed"],
                         [[m.question_id, m.criterion, f"{m.missed} of {m.assessed}"] for m in missed])
               if missed else "None missed yet.")
    out += ["", "## Answers per day (last 30 days)", ""]
    most = max((d.answers for d in stats.history), default=0)
    if most:
        out += ["```"] + [f"{d.day.isoformat()}  {_bar(d.answers, most)} {d.answers} ({d.correct} right)"
                          for d in stats.history if d.answers] + ["```", ""]
    else:
        out += ["No answers yet.", ""]
    out += ["## Due in the coming days", "",
            _md_table(["Day", "Due"], [[day.isoformat(), count] for day, count in stats.due_ahead]), ""]
    out += ["## Recent free responses", ""]
    if not report.free_responses:
        out += ["None yet.", ""]
    for item in report.free_responses:
        out += [f"### {item.question_id} — {percent(item.score)} ({report.local(item.answered_at)})", "",
                md_quote(item.prompt), "", "Answer:", "", md_quote(item.response), ""]
        out += [f"- [{'x' if mark.met else ' '}] {mark.criterion} (weight {mark.weight:g})" for mark in item.marks]
        out.append("")
    out += ["## Numeric answers missed (exact draw, from the recorded seed)", ""]
    if not report.numeric_misses:
        out += ["None.", ""]
    for miss in report.numeric_misses:
        out += [f"### {miss.question_id} (seed {miss.seed}, {report.local(miss.answered_at)})", "",
                md_quote(miss.prompt), "", f"- answered: {_given(miss.response)}", f"- expected: {miss.expected}"]
        if miss.diagnosis:
            out.append(f"- likely slip: {miss.diagnosis}")
        out += ["", "```", *miss.worked, "```", ""]
    out += ["## Definitions", ""] + [f"- **{name}**: {text}" for name, text in DEFINITIONS.items()]
    return "\n".join(out) + "\n"


def _given(response: str) -> str:
    return response or 'skipped ("I don\'t know")'


def _bar(count: int, most: int, width: int = 30) -> str:
    return ("█" * max(1, round(width * count / most))).ljust(width)


def _md_cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(header: list[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


# -- HTML ----------------------------------------------------------------------------------

_CSS = """body{font:15px/1.5 system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.2rem .6rem;text-align:left}
.bar{display:inline-block;height:.8em;background:#4a7bd0}.right{background:#3a9a5b}
blockquote{border-left:3px solid #ccc;margin:.5rem 0;padding-left:.8rem;white-space:pre-wrap}
pre{background:#f4f4f4;padding:.5rem}.met{color:#3a9a5b}.missed{color:#b33}
figure.chart{margin:0}figure.chart svg{max-width:100%;height:auto}"""


def render_html(report: Report) -> str:
    e = html.escape
    stats = report.stats
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<title>quizprep self-assessment</title>", f"<style>{_CSS}</style></head><body>",
        "<h1>quizprep self-assessment</h1>",
        f"<p>{e(report.generated())}. {stats.total_answers} answers, accuracy "
        f"{percent(stats.accuracy)}, streak {days(stats.streak_days)}.</p>",
        "<h2>Topics</h2>",
        _html_table(["Topic", "Questions", "Seen", "Due", "Answers", "Accuracy", "Mastery"],
                    [[t.title, t.questions, t.seen, t.due, t.attempts, percent(t.accuracy), percent(t.mastery)]
                     for t in stats.topics]),
        *_html_pictures(report.charts),
        *html_sections(report.forecast, stats.exercises, report.mocks, report.choice_misses, report.local,
                       _html_table),
        "<h2>Rubric criteria missed most often</h2>",
    ]
    missed = stats.missed_criteria[:TOP_MISSED]
    parts.append(_html_table(["Question", "Criterion", "Missed"],
                             [[m.question_id, m.criterion, f"{m.missed} of {m.assessed}"] for m in missed])
                 if missed else "<p>None missed yet.</p>")
    parts.append("<h2>Answers per day (last 30 days)</h2>")
    most = max((d.answers for d in stats.history), default=0)
    if most:
        rows = [[d.day.isoformat(),
                 f'<span class="bar right" style="width:{12 * d.correct / most:.2f}rem"></span>'
                 f'<span class="bar" style="width:{12 * (d.answers - d.correct) / most:.2f}rem"></span> '
                 f"{d.answers} ({d.correct} right)"] for d in stats.history if d.answers]
        parts.append(_html_table(["Day", "Answers"], rows, raw_columns={1}))
    else:
        parts.append("<p>No answers yet.</p>")
    parts += ["<h2>Due in the coming days</h2>",
              _html_table(["Day", "Due"], [[day.isoformat(), count] for day, count in stats.due_ahead]),
              "<h2>Recent free responses</h2>"]
    if not report.free_responses:
        parts.append("<p>None yet.</p>")
    for item in report.free_responses:
        marks = "".join(
            f'<li class="{"met" if m.met else "missed"}">{"✓" if m.met else "✗"} {e(m.criterion)} '
            f"(weight {m.weight:g})</li>" for m in item.marks)
        parts.append(f"<h3>{e(item.question_id)} — {percent(item.score)} ({e(report.local(item.answered_at))})</h3>"
                     f"<blockquote>{e(item.prompt)}</blockquote><p>Answer:</p>"
                     f"<blockquote>{e(item.response)}</blockquote><ul>{marks}</ul>")
    parts.append("<h2>Numeric answers missed (exact draw, from the recorded seed)</h2>")
    if not report.numeric_misses:
        parts.append("<p>None.</p>")
    for miss in report.numeric_misses:
        slip = f"<li>likely slip: {e(miss.diagnosis)}</li>" if miss.diagnosis else ""
        parts.append(f"<h3>{e(miss.question_id)} (seed {miss.seed}, {e(report.local(miss.answered_at))})</h3>"
                     f"<blockquote>{e(miss.prompt)}</blockquote><ul><li>answered: {e(_given(miss.response))}</li>"
                     f"<li>expected: {e(miss.expected)}</li>{slip}</ul>"
                     f"<pre>{e(chr(10).join(miss.worked))}</pre>")
    parts.append("<h2>Definitions</h2><ul>" + "".join(
        f"<li><b>{e(name)}</b>: {e(text)}</li>" for name, text in DEFINITIONS.items()) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _html_pictures(charts: ProgressCharts | None) -> list[str]:
    from quizprep.study.report_charts import svg_charts

    if charts is None:
        return []
    pictures = [f'<h3>{html.escape(title)}</h3><figure class="chart">{svg}</figure>'
                for title, svg in svg_charts(charts)]
    return ["<h2>Progress</h2>", *pictures]


def _html_table(header: list[str], rows: Sequence[Sequence[object]],
                raw_columns: frozenset[int] | set[int] = frozenset()) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{v if i in raw_columns else html.escape(str(v))}</td>" for i, v in enumerate(row))
        + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
