"""The end of a session: score per topic, rubric items missed, and (for a mock) whether time ran out."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Mapping, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from quizprep.bank.model import Question
from quizprep.tui.screens.step import Step
from quizprep.study.session import SessionReport
from quizprep.tui.screens.question import MODE_NAMES
from quizprep.tui.widgets.flat_footer import FlatFooter

if TYPE_CHECKING:
    from quizprep.bank.numeric import Draw

# A practice ended early leaves the rest of its queue unasked: the first few name what was
# skipped; a list of the whole bank would bury the rest of the report.
NOT_ANSWERED_LISTED = 10


def clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


SENTENCE_END = re.compile(r"[.?!](?=\s)")  # a number's point (3.35) is followed by a digit
# Full stops that end no sentence: "Vaswani et al. (2017) report", "e.g. a", "i.e. how", "vs. MQA".
ABBREVIATED = re.compile(r"\b(?:et al|e\.g|i\.e|vs|cf|etc|approx|eq|fig|sec)\.$", re.IGNORECASE)


def first_sentence(markdown: str) -> str:
    """The first sentence of a prompt's Markdown, unless that would cut a `code` or **bold** span."""
    ends = (markdown[:end.end()] for end in SENTENCE_END.finditer(markdown))
    sentence = next((text for text in ends if not ABBREVIATED.search(text)), markdown)
    balanced = sentence.count("`") % 2 == 0 and sentence.count("**") % 2 == 0
    return sentence if balanced else markdown


def question_item(qid: str, questions: Mapping[str, Question], numbers: Draw | None = None) -> str:
    """A list item naming a question by what it asks (the numbers it was shown), its id after."""
    from quizprep.study.history import prompt_summary

    question = questions.get(qid)
    return f"- {first_sentence(prompt_summary(question, numbers))} *({qid})*" if question else f"- {qid}"


def score_text(report: SessionReport) -> str:
    """"80% over 5 answers"; a mock round left unfinished is scored over all its questions, with
    what was answered beside: "38% (3 of 8 answered, all right)" ("100% over 3" flattered it)."""
    answered = len(report.feedback)
    if not answered:
        return "no answers"  # not "0 % over 0 answers"
    size = report.round_size or answered
    if size <= answered:
        return f"{report.score:.0%} over {answered} answer{'' if answered == 1 else 's'}"
    right = {1.0: "all right", 0.0: "none right"}.get(report.score, f"{report.score:.0%} on those")
    return f"{report.round_score:.0%} ({answered} of {size} answered, {right})"


def report_markdown(report: SessionReport, awaiting: Sequence[str] = (), titles: Mapping[str, str] | None = None,
                    questions: Mapping[str, Question] | None = None) -> str:
    """The report as Markdown; `awaiting` are ids of free answers saved with their rubric left
    for later, which the session counts as not answered yet; `titles` the topics' titles and
    `questions` the session's, by id, to name them by what they ask."""
    answered = len(report.feedback)
    titles, questions = titles or {}, questions or {}
    took = clock((report.ended_at - report.started_at).total_seconds())
    parts = [f"## {MODE_NAMES[report.mode]}: {score_text(report)} in {took}"]
    if report.out_of_time:
        parts.append("**Time ran out** before the round was over.")
    if report.topics:
        rows = "\n".join(f"| {_cell(titles.get(t.topic, t.topic))} | {t.answered} | {t.fraction:.0%} |"
                         for t in report.topics)
        parts.append(f"| Topic | Answered | Score |\n|---|--:|--:|\n{rows}")
    else:
        parts.append("No answers in this session.")
    if report.missed:
        parts.append("### Rubric items missed\n\n"
                     + "\n".join(f"- {criterion} *({qid})*" for qid, criterion in report.missed))
    # Once each, with its latest numbers: a miss asked again and missed again was listed twice.
    wrong = list({f.question.id: f for f in report.feedback if not f.correct}.values())
    if wrong:
        parts.append("### To revisit\n\n" + "\n".join(question_item(f.question.id, {f.question.id: f.question},
                                                                     f.showing.draw) for f in wrong))
    if awaiting:
        parts.append("### Awaiting your self-assessment\n\n"
                     + "\n".join(question_item(qid, questions) for qid in awaiting)
                     + "\n\n*Answers saved; their rubric is offered again when quizprep next starts.*")
    revisit = {f.question.id for f in wrong}
    unanswered = [qid for qid in report.unanswered if qid not in awaiting and qid not in revisit]  # once only
    if unanswered:
        listed = "\n".join(question_item(qid, questions, report.draws.get(qid))
                           for qid in unanswered[:NOT_ANSWERED_LISTED])
        more = len(unanswered) - NOT_ANSWERED_LISTED
        parts.append(f"### Not answered\n\n{listed}" + (f"\n\n*…and {more} more.*" if more > 0 else ""))
    if answered:  # not after "No answers in this session."
        parts.append("*Every answer above is saved. Your next review is scheduled from them.*")
    return "\n\n".join(parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


class ReportScreen(Step[None]):
    BINDINGS = [Binding("enter,escape", "close", "Home"), Binding("d", "debrief", "Debrief each answer")]

    def __init__(self, report: SessionReport, awaiting: Sequence[str] = (), titles: Mapping[str, str] | None = None,
                 questions: Mapping[str, Question] | None = None) -> None:
        super().__init__()
        self.report = report
        self.awaiting = tuple(awaiting)
        self.titles = dict(titles or {})
        self.questions = dict(questions or {})

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="report-body"):
            yield Markdown(report_markdown(self.report, self.awaiting, self.titles, self.questions), id="report")
        yield FlatFooter()

    def on_mount(self) -> None:
        self.query_one("#report-body").focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return bool(self.report.feedback) if action == "debrief" else True

    def action_debrief(self) -> None:
        from quizprep.tui.screens.debrief import DebriefScreen

        self.app.push_screen(DebriefScreen(self.report.feedback, schedules=self.report.mode != "cram"))

    def action_close(self) -> None:
        self.dismiss(None)
