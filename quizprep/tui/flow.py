"""A study session screen by screen: building it (waiting out another program's lock on the
progress database), then question → feedback (or rubric) until it ends, then its report; and
the rubric of free answers an earlier run left unassessed.

The app runs these in its workers; the session modules and screens are imported on first use,
as a cold start to Home needs none of them."""
from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Callable, Sequence

from quizprep.study import lengths
from quizprep.study.store import StoreBusy, StoreError
from quizprep.tui.outcome import NEXT, TAKEN_BACK
from quizprep.tui.screens.step import end_flow, show_step

if TYPE_CHECKING:
    from quizprep.study.limits import Allowance
    from quizprep.study.session import Feedback, PendingAssessment, Session, SessionReport
    from quizprep.tui.app import QuizApp

BUSY_RETRIES = 20
RETRY_PAUSE_S = 1.0


def mock_shape(length: int | None, minutes: float | None) -> tuple[int, float]:
    """A mock round's questions and minutes: `length` (else the default count), and unless
    `minutes` says otherwise the default time per question times that count."""
    count = length or lengths.MOCK_QUESTIONS
    return count, minutes or lengths.MOCK_MINUTES * count / lengths.MOCK_QUESTIONS


class SessionFlow:
    """The sessions of `app`, which holds the store, the questions and the choices made on Home."""

    def __init__(self, app: QuizApp) -> None:
        self.app = app
        self.warned_time_low = False  # the mock round's "2 minutes left" is said once per round

    async def assess_left_over(self) -> None:
        """Offer free responses left unassessed last time, one after another, until Esc."""
        from quizprep.study.builders import unassessed
        from quizprep.study.rubric import assess_answer
        from quizprep.study.drafts import Drafts
        from quizprep.tui.screens.rubric import RubricScreen

        app = self.app
        assert app.store is not None
        pending = unassessed(app.store, app.questions)
        if pending:
            count = f"{len(pending)} free answer{'s' if len(pending) != 1 else ''}"
            app.notify(f"{count} from last time still need{'s' if len(pending) == 1 else ''} your rubric "
                       "self-assessment; Esc leaves one for later.", title="Welcome back")
        drafts = Drafts(app.store, app.now)
        for answer in pending:
            screen = RubricScreen(answer, met=drafts.shown(answer.question).get("ticked", ()))
            met = await show_step(app, screen, app.key_hold)
            if met is None:
                self._keep_ticks(answer, screen.met)
                break
            try:
                self._saved(assess_answer(app.store, answer, met, app.now()))
                drafts.forget_ticks(answer.question.id)
            except StoreError as error:
                app.store_problem(error)  # the answer is kept; it is offered again next time
                break
        await end_flow(app, app.key_hold)
        app.refresh_home()  # Home came back on screen before the last assessment was saved

    async def build(self, mode: str, topics: Sequence[str], question: str | None = None) -> Session | None:
        """The session of `mode` on `topics` (or of the one `question`); None, having said why,
        when there is nothing to ask or it could not be built."""
        from quizprep.study.builders import single

        app = self.app
        assert app.store is not None
        if question is None and (empty := self._without_questions(topics)):
            app.notify(empty, severity="error", markup=False)
            return None
        for attempt in range(1, BUSY_RETRIES + 1):
            try:
                if question is None:  # the builder reads today's limits: inside the retries
                    session = self._builder(mode)(app.store, app.questions, topics or app.options.topics,
                                                  now=app.now, rng=app.rng)
                else:
                    session = single(app.store, app.questions, question, now=app.now, rng=app.rng)
                break
            except StoreBusy as error:
                if attempt == BUSY_RETRIES:
                    app.store_problem(error)
                    return None
                app.notify(f"Waiting for another program to finish writing to {app.store.path} "
                           f"(attempt {attempt} of {BUSY_RETRIES})…", title="Progress database busy",
                           severity="warning", timeout=RETRY_PAUSE_S + app.busy_timeout_s, markup=False)
                await asyncio.sleep(RETRY_PAUSE_S)
            except StoreError as error:
                app.store_problem(error)
                return None
            except ValueError as error:
                app.notify(str(error), severity="error", markup=False)
                return None
        if session.finished:
            self._end(session)
            app.notify(self._nothing_to_do(mode, topics), title="Nothing to do")
            return None
        return session

    def _without_questions(self, topics: Sequence[str]) -> str:
        """What to say when a topic chosen has nothing to ask (known only from history, or left
        out by --topic or the search), naming topics by their titles; "" when each has questions."""
        have = {q.topic for q in self.app.questions}
        missing = [topic for topic in topics if topic not in have]
        titles = self.app.summary.titles
        return f"No questions to ask in {', '.join(titles.get(t, t) for t in missing)}." if missing else ""

    def _builder(self, mode: str) -> Callable[..., Session]:
        """The session builder for `mode`, with the length and time chosen on the command line
        or on Home."""
        from quizprep.study import builders

        app = self.app
        if mode == "mock":
            count, minutes = mock_shape(app.length, app.options.minutes)
            return partial(builders.mock, count=count, minutes=minutes)
        if mode == "cram":  # a session's worth, as Home says and interview practice asks
            return partial(builders.cram, limit=app.length or lengths.INTERVIEW_QUESTIONS)
        if mode == "practice" and app.interview is not None:
            # Never every question at once: the least likely recalled first, a session's worth.
            return partial(builders.interview, on=app.interview, limit=app.length or lengths.INTERVIEW_QUESTIONS,
                           zone=app.tz, allowance=self._allowance())
        build = builders.review if mode == "review" else builders.practice
        return partial(build, limit=app.length, allowance=self._allowance())

    def _allowance(self) -> Allowance | None:
        """What today's daily limits leave (see quizprep.study.limits); None without limits."""
        from quizprep.tui.daily import allowance

        app = self.app
        assert app.store is not None
        return allowance(app.store, app.now(), app.tz)

    def _nothing_to_do(self, mode: str, topics: Sequence[str]) -> str:
        from quizprep.tui.daily import nothing_to_do

        app = self.app
        assert app.store is not None
        limited = mode in ("review", "practice")  # practice is only ever empty under daily limits
        wanted = set(topics or app.options.topics)
        return nothing_to_do(app.store, mode, [q for q in app.questions if not wanted or q.topic in wanted],
                             self._allowance() if limited else None, app.now())

    async def run(self, session: Session) -> None:
        """Question → feedback (or rubric) until the queue is empty, the learner stops or time is up."""
        from quizprep.study.session import Feedback, PendingAssessment
        from quizprep.tui.screens.feedback import FeedbackScreen
        from quizprep.tui.screens.question import QuestionScreen, seconds_left
        from quizprep.tui.screens.report import ReportScreen
        from quizprep.tui.widgets.round_timer import WARN_AT_S

        app, hold = self.app, self.app.key_hold
        later: list[str] = []  # free answers whose rubric was left for the next start
        # A round no longer than the warning time is not told "two minutes left" as it opens.
        self.warned_time_low = session.time_limit is not None and session.time_limit.total_seconds() <= WARN_AT_S
        while (showing := session.next()) is not None:
            given = await show_step(app, QuestionScreen(session, showing), hold)
            if given == TAKEN_BACK:
                continue
            if isinstance(given, PendingAssessment):
                timer = (lambda: seconds_left(session)) if session.time_limit is not None else None
                pending, assessed = given, await self._assess(session, given, timer)
                if assessed is None:
                    later.append(pending.question.id)
                    continue
                given = assessed
            if not isinstance(given, Feedback):
                break
            # As in an interview, a mock round moves straight on; its report says what was wrong.
            if session.mode != "mock" and await show_step(app, FeedbackScreen(session, given), hold) != NEXT:
                break
        await show_step(app, ReportScreen(self._end(session), awaiting=tuple(later),
                                          titles=app.loaded.titles(), questions=session.questions), hold)
        await end_flow(app, hold)
        app.refresh_home()

    async def _assess(self, session: Session, given: PendingAssessment,
                      timer: Callable[[], float] | None) -> Feedback | None:
        """Ask for the rubric until it is saved, or None when it is left for later. The answer
        itself is already saved; a failed save of the ticks is offered again at once."""
        from quizprep.tui.screens.rubric import RubricScreen

        ticks = given.showing.ticked  # those of an answer taken back, to change
        while True:
            screen = RubricScreen(given, timer, ticks)
            met = await show_step(self.app, screen, self.app.key_hold)
            if met is None:
                self._keep_ticks(given, screen.met)
                return None
            try:
                feedback = session.assess(given, met)
            except StoreError as error:
                self.app.store_problem(error)
                ticks = met
                continue
            self._saved(feedback)
            return feedback

    def _keep_ticks(self, pending: PendingAssessment, ticks: tuple[bool, ...]) -> None:
        """The ticks of a rubric left for later open it next time (Esc right after Ctrl+Z lost them)."""
        from quizprep.study.drafts import Drafts

        app = self.app
        assert app.store is not None
        try:
            Drafts(app.store, app.now).keep_ticks(pending.question.id, ticks)
        except StoreError as error:
            app.store_problem(error)

    def warn_time_low(self) -> None:
        # Each screen of a round has its own timer; the learner hears the warning once.
        if not self.warned_time_low:
            self.warned_time_low = True
            self.app.notify("Two minutes left in this round.", title="Mock interview", severity="warning")

    def _end(self, session: Session) -> SessionReport:
        try:
            return session.end()
        except StoreError as error:  # only the session's end time was not saved; answers were
            self.app.store_problem(error)
            return session.report()

    def _saved(self, feedback: Feedback) -> None:
        self.app.notify(f"Score {feedback.score:.0%}, rated {feedback.rating.name}.", title="Assessment saved")
