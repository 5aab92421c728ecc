"""The end of a session: score per topic, rubric items missed, and (for a mock) whether time ran out."""
from __future__ import annotations

from typing import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Markdown

from quizprep.tui.screens.step import Step
from quizprep.study.session import SessionReport
from quizprep.tui.screens.question import MODE_NAMES


def clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def report_markdown(report: SessionReport, awaiting: Sequence[str] = ()) -> str:
    """The report as Markdown; `awaiting` are ids of free answers saved with their rubric left
    for later, which the session counts as not answered yet."""
    answered = len(report.feedback)
    took = clock((report.ended_at - report.started_at).total_seconds())
    parts = [f"## {MODE_NAMES[report.mode]}: {report.score:.0%} over {answered} answer"
             f"{'' if answered == 1 else 's'} in {took}"]
    if report.out_of_time:
        parts.append("**Time ran out** before the round was over.")
    if report.topics:
        rows = "\n".join(f"| {t.topic} | {t.answered} | {t.fraction:.0%} |" for t in report.topics)
        parts.append(f"| Topic | Answered | Score |\n|---|--:|--:|\n{rows}")
    else:
        parts.append("No answers in this session.")
    if report.missed:
        parts.append("### Rubric items missed\n\n"
                     + "\n".join(f"- {criterion} *({qid})*" for qid, criterion in report.missed))
    wrong = [f for f in report.feedback if not f.correct]
    if wrong:
        parts.append("### To revisit\n\n" + "\n".join(f"- {f.question.id}" for f in wrong))
    if awaiting:
        parts.append("### Awaiting your self-assessment\n\n" + "\n".join(f"- {qid}" for qid in awaiting)
                     + "\n\n*Answers saved; their rubric is offered again when quizprep next starts.*")
    unanswered = [qid for qid in report.unanswered if qid not in awaiting]
    if unanswered:
        parts.append("### Not answered\n\n" + "\n".join(f"- {qid}" for qid in unanswered))
    parts.append("*Every answer above is saved. Your next review is scheduled from them.*")
    return "\n\n".join(parts)


class ReportScreen(Step[None]):
    BINDINGS = [Binding("enter,escape", "close", "Home"), Binding("d", "debrief", "Debrief each answer")]

    def __init__(self, report: SessionReport, awaiting: Sequence[str] = ()) -> None:
        super().__init__()
        self.report = report
        self.awaiting = tuple(awaiting)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="report-body"):
            yield Markdown(report_markdown(self.report, self.awaiting), id="report")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#report-body").focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return bool(self.report.feedback) if action == "debrief" else True

    def action_debrief(self) -> None:
        from quizprep.tui.screens.debrief import DebriefScreen

        self.app.push_screen(DebriefScreen(self.report.feedback))

    def action_close(self) -> None:
        self.dismiss(None)
