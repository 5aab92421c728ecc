"""The quiz app: loads the banks, opens the progress store and runs study sessions screen by screen."""
from __future__ import annotations

import asyncio
import gc
import os
import random
from dataclasses import replace
from datetime import date, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from textual import events, work
from textual.app import App
from textual.binding import Binding

from quizprep.bank.loader import LoadResult, default_cache_dir, load_banks
from quizprep.study.clock import Clock, utc_now
from quizprep.study.stats import compute_stats, topic_overview, topic_titles
from quizprep.study.store import Store, StoreBusy, StoreError
from quizprep.tui.outcome import NEXT
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.step import KeyHold, end_flow, show_step
from quizprep.tui.subject import history_subject, shown_question

if TYPE_CHECKING:
    from quizprep.bank.model import Question
    from quizprep.study.interview import Forecast
    from quizprep.study.limits import Allowance
    from quizprep.study.session import Feedback, PendingAssessment, Session, SessionReport

# Sessions and the other screens (Markdown, TextArea...) are imported where they are first
# needed: cold start to the home screen is measured and kept close to a bare Textual app's.

DARK, LIGHT = "textual-dark", "textual-light"
THEME_SETTING = "theme"
LENGTH_SETTING = "length"  # the session length last chosen on Home (l)
WARNINGS_SHOWN = 4
# A write waits at most this long for another program's lock: the app's screen cannot redraw
# while it waits, so a held lock is waited out in short, visible attempts instead.
BUSY_TIMEOUT_S = 1.0
BUSY_RETRIES = 20
RETRY_PAUSE_S = 1.0


def readable_path(file: str) -> str:
    """`file` relative to the working directory when it lies below it: short enough for a toast."""
    relative = os.path.relpath(file)
    return file if relative.startswith("..") else relative


def saved_length(value: str | None) -> int | None:
    """The length saved by `choose_length`; None for "all", never saved or garbled."""
    return int(value) if value and value.isdigit() and int(value) > 0 else None


class QuizApp(App[None]):
    """`quizprep quiz`. `now`, `tz` and `seed` are injectable so tests and snapshots see fixed
    times and draws. `question` opens a session of that one question; `loaded` is the banks when
    the command line has already read them (to check --topic and --question)."""

    CSS_PATH = Path(__file__).with_name("quizprep.tcss")
    TITLE = "quizprep"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("question_mark", "help", "Help"),
        Binding("f1", "help", "Help", show=False),
        Binding("ctrl+t", "toggle_theme", "Theme", priority=True, show=False),  # in help; footers are full
        Binding("h", "history", "History", show=False),  # in help: a choice question's footer cut off ^f Flag
        Binding("ctrl+f", "flag", "Flag"),
    ]

    def __init__(self, *, banks: Sequence[str | Path] | None = None, topics: Sequence[str] = (),
                 db: str | Path | None = None, mode: str | None = None, question: str | None = None,
                 loaded: LoadResult | None = None, now: Clock = utc_now, tz: tzinfo | None = None,
                 seed: int | None = None, length: int | None = None, minutes: float | None = None,
                 interview: date | None = None, search_text: str = "", tags: Sequence[str] = (),
                 daily_limits: Mapping[str, int | None] | None = None) -> None:
        super().__init__()
        self.daily_limits = dict(daily_limits or {})  # "new"/"reviews" given on the command line, to save
        self.length = length  # questions per session (a mock's count); None: the builders' default
        self.minutes = minutes  # a mock's time limit; None: the default
        self.interview = interview  # None: the date saved by an earlier run, if any (see on_load)
        self.search_text = search_text
        self.tags = tuple(tags)
        self.bank_paths = banks
        self.topics = tuple(topics)
        self.db_path = db
        self.start_mode = mode
        self.start_question = question
        self.now = now
        self.tz = tz
        self.rng = random.Random(seed)
        self.store: Store | None = None
        self.loaded = loaded or LoadResult()
        self.preloaded = loaded is not None
        self.questions: list[Question] = []
        self.warned_time_low = False  # the mock round's "2 minutes left" is said once per round
        self.key_hold = KeyHold(self)

    async def on_event(self, event: events.Event) -> None:
        if not self.key_hold.take(event):
            await super().on_event(event)

    def on_load(self) -> None:
        # Load runs before the first screen is built, so Home can be that screen (no second one
        # composed and swapped in), and a database that cannot open stops the app before the
        # terminal is taken over.
        # Until the first screen is up, everything built (banks, widgets, styles) is kept: cycle
        # collections over it find nothing and took about 16 ms of a cold start.
        gc.disable()
        self.theme = DARK
        if not self.preloaded:
            self.loaded = load_banks(self.bank_paths, cache_dir=default_cache_dir())
        self.questions = self._matching()
        try:
            self.store = Store.open(self.db_path, busy_timeout_s=BUSY_TIMEOUT_S, check_rows=False)
            self.store.adopt_merged(self.loaded.merged())
            self._remember_interview()
            self._save_daily_limits()
            if self.length is None:
                self.length = saved_length(self.store.setting(LENGTH_SETTING))
            saved = self.store.setting(THEME_SETTING)
        except StoreError as error:
            self.exit(return_code=1, message=f"quizprep: {error}")
            return
        if saved in self.available_themes:  # a name an older or newer Textual knows is left alone
            self.theme = saved

    def _remember_interview(self) -> None:
        """Save a date given on the command line; without one, use the date saved last time."""
        assert self.store is not None
        if self.interview is None and self.store.setting("interview") is None:
            return  # the usual start: no need to load the forecast's module
        from quizprep.study import interview

        if self.interview is not None:
            interview.save_date(self.store, self.interview)
        else:
            self.interview = interview.saved_date(self.store, self.now().astimezone(self.tz).date())

    def _save_daily_limits(self) -> None:
        if self.daily_limits:  # else the limits module is loaded when a session is built
            from quizprep.tui.daily import save_given_limits

            save_given_limits(self)

    def apply_search(self, text: str, tags: Sequence[str] = ()) -> None:
        """Study only the questions matching `text` and any of `tags` (all when both are empty):
        Home's counts and every session draw from them."""
        self.search_text, self.tags = text, tuple(tags)
        self.questions = self._matching()
        self.refresh_home()

    def _matching(self) -> list[Question]:
        pool = [q for q in self.loaded.questions if not self.topics or q.topic in self.topics]
        if not (self.search_text or self.tags):
            return pool  # the usual start: the search module is not loaded
        from quizprep.study.search import search

        return search(pool, self.search_text, self.tags)

    def action_interview_date(self) -> None:
        from quizprep.tui.screens.interview_date import ask_interview_date

        ask_interview_date(self)

    def forecast(self) -> Forecast | None:
        """Predicted recall per topic on the interview date (its morning and the days left counted
        in the learner's time zone); None when no date is set."""
        from quizprep.study.interview import forecast

        if self.interview is None or self.store is None:
            return None
        return forecast(self.store, self.questions, self.interview, self.now().astimezone(self.tz),
                        topic_titles(self.loaded))

    def get_default_screen(self) -> HomeScreen:
        return HomeScreen(self._overview if self.store is not None else list)

    def on_mount(self) -> None:
        self._warn()
        self.resume_and_start()
        self.call_after_refresh(self.check_rows)
        self.call_after_refresh(gc.enable)

    def on_unmount(self) -> None:
        gc.enable()  # also when the app ends before its first screen
        if self.store is not None:
            self.store.close()

    def _warn(self) -> None:
        assert self.store is not None
        for notice in self.store.notices:
            self.notify(notice, title="Progress database", severity="error", timeout=30, markup=False)
        warnings = [str(replace(error, file=readable_path(error.file))) for error in self.loaded.errors]
        for line in warnings[:WARNINGS_SHOWN]:
            self.notify(line, title="Question skipped", severity="warning", timeout=20, markup=False)
        if len(warnings) > WARNINGS_SHOWN:
            self.notify(f"…and {len(warnings) - WARNINGS_SHOWN} more; `quizprep check` lists them all.",
                        title="Questions skipped", severity="warning", timeout=20)
        missing = set(self.topics) - {q.topic for q in self.loaded.questions}
        if missing:
            self.notify(f"No questions in topic(s): {', '.join(sorted(missing))}", severity="error",
                        markup=False)

    def _overview(self) -> list:
        assert self.store is not None
        try:
            return topic_overview(self.store, self.questions, now=self.now(), titles=topic_titles(self.loaded),
                                  filtered=bool(self.search_text or self.tags))
        except StoreError as error:
            self.store_problem(error)
            return []

    @work(thread=True, exit_on_error=False, group="rows")
    def check_rows(self) -> None:
        """Set aside rows a damaged disk garbled (reads skip them meanwhile). This runs once Home
        is on screen: the check reads every row, about 6 ms per 1,000 answers."""
        assert self.store is not None
        try:
            notices = self.store.check_rows()
        except StoreError as error:
            self.call_from_thread(self.store_problem, error)
            return
        if notices:
            self.call_from_thread(self._rows_set_aside, notices)

    def _rows_set_aside(self, notices: Sequence[str]) -> None:
        for notice in notices:
            self.notify(notice, title="Progress database", severity="error", timeout=30, markup=False)
        self.refresh_home()

    def store_problem(self, error: StoreError) -> None:
        """Say what went wrong with the progress database; the app carries on."""
        self.notify(str(error), title="Progress database", severity="error", timeout=30, markup=False)

    # -- sessions --------------------------------------------------------------------------

    @work(exclusive=True, group="session")
    async def resume_and_start(self) -> None:
        """Offer free responses left unassessed last time, then start the --question or --mode
        session if any."""
        assert self.store is not None
        if self.store.unassessed():  # checked here first: the session module is not needed at start
            await self._assess_left_over()
        if self.start_question:
            await self._start("practice", self.topics, self.start_question)
        elif self.start_mode:
            await self._start(self.start_mode, self.topics)

    async def _assess_left_over(self) -> None:
        from quizprep.study import session as sessions
        from quizprep.tui.screens.rubric import RubricScreen

        assert self.store is not None
        pending = sessions.unassessed(self.store, self.questions)
        if pending:
            count = f"{len(pending)} free answer{'s' if len(pending) != 1 else ''}"
            self.notify(f"{count} from last time still need{'s' if len(pending) == 1 else ''} your rubric "
                        "self-assessment; Esc leaves one for later.", title="Welcome back")
        for answer in pending:
            met = await show_step(self, RubricScreen(answer))
            if met is None:
                break
            try:
                self._saved(sessions.assess_answer(self.store, answer, met, self.now()))
            except StoreError as error:
                self.store_problem(error)  # the answer is kept; it is offered again next time
                break
        await end_flow(self)
        self.refresh_home()  # Home came back on screen before the last assessment was saved

    def on_home_screen_start(self, message: HomeScreen.Start) -> None:
        self.start_session(message.mode, message.topics)

    @work(exclusive=True, group="session")
    async def start_session(self, mode: str, topics: Sequence[str]) -> None:
        await self._start(mode, topics)

    async def _start(self, mode: str, topics: Sequence[str], question: str | None = None) -> None:
        from quizprep.study import session as sessions

        assert self.store is not None
        for attempt in range(1, BUSY_RETRIES + 1):
            try:
                if question is None:  # the builder reads today's limits: inside the retries
                    session = self._builder(mode)(self.store, self.questions, topics or self.topics, now=self.now,
                                                  rng=self.rng)
                else:
                    session = sessions.single(self.store, self.questions, question, now=self.now, rng=self.rng)
                break
            except StoreBusy as error:
                if attempt == BUSY_RETRIES:
                    self.store_problem(error)
                    return
                self.notify(f"Waiting for another program to finish writing to {self.store.path} "
                            f"(attempt {attempt} of {BUSY_RETRIES})…", title="Progress database busy",
                            severity="warning", timeout=RETRY_PAUSE_S + BUSY_TIMEOUT_S, markup=False)
                await asyncio.sleep(RETRY_PAUSE_S)
            except StoreError as error:
                self.store_problem(error)
                return
            except ValueError as error:
                self.notify(str(error), severity="error", markup=False)
                return
        if session.finished:
            self._end(session)
            self.notify(self._nothing_to_do(mode, topics), title="Nothing to do")
            return
        self.run_session(session)

    def _nothing_to_do(self, mode: str, topics: Sequence[str]) -> str:
        from quizprep.tui.daily import nothing_to_do

        return nothing_to_do(self, mode, topics)

    def _builder(self, mode: str) -> Callable[..., Session]:
        """The session builder for `mode`, with the length and time chosen on the command line
        or on Home."""
        from functools import partial

        from quizprep.study import session as sessions

        if mode == "mock":
            count, minutes = self.mock_shape()
            return partial(sessions.mock, count=count, minutes=minutes)
        if mode == "cram":
            return partial(sessions.cram, limit=self.length)
        if mode == "practice" and self.interview is not None:
            # Never every question at once: the least likely recalled first, a session's worth.
            return partial(sessions.interview, on=self.interview, limit=self.length or sessions.INTERVIEW_QUESTIONS,
                           zone=self.tz)
        return partial({"practice": sessions.practice, "review": sessions.review}[mode], limit=self.length,
                       allowance=self.allowance())

    def allowance(self) -> Allowance | None:
        """What today's daily limits leave (see quizprep.study.limits); None without limits."""
        from quizprep.tui.daily import allowance

        return allowance(self)

    def choose_length(self, length: int | None) -> None:
        """Questions per session from now on (None: all), also for later runs."""
        assert self.store is not None
        self.length = length
        try:
            self.store.set_setting(LENGTH_SETTING, str(length or "all"))
        except StoreError as error:  # the length still applies to this run
            self.store_problem(error)

    def mock_shape(self) -> tuple[int, float]:
        """A mock round's questions and minutes: the chosen length, and unless --minutes says
        otherwise the default time per question times that length."""
        from quizprep.study.session import MOCK_MINUTES, MOCK_QUESTIONS

        count = self.length or MOCK_QUESTIONS
        return count, self.minutes or MOCK_MINUTES * count / MOCK_QUESTIONS

    @work(exclusive=True, group="session")
    async def run_session(self, session: Session) -> None:
        """Question → feedback (or rubric) until the queue is empty, the learner stops or time is up."""
        from quizprep.study.session import Feedback, PendingAssessment
        from quizprep.tui.screens.feedback import FeedbackScreen
        from quizprep.tui.screens.question import QuestionScreen, seconds_left
        from quizprep.tui.screens.report import ReportScreen
        from quizprep.tui.widgets.round_timer import WARN_AT_S

        later: list[str] = []  # free answers whose rubric was left for the next start
        # A round no longer than the warning time is not told "two minutes left" as it opens.
        self.warned_time_low = session.time_limit is not None and session.time_limit.total_seconds() <= WARN_AT_S
        while (showing := session.next()) is not None:
            given = await show_step(self, QuestionScreen(session, showing))
            if isinstance(given, PendingAssessment):
                timer = (lambda: seconds_left(session)) if session.time_limit is not None else None
                pending, given = given, await self._assess(session, given, timer)
                if given is None:
                    later.append(pending.question.id)
                    continue
            if not isinstance(given, Feedback):
                break
            # As in an interview, a mock round moves straight on; its report says what was wrong.
            if session.mode != "mock" and await show_step(self, FeedbackScreen(session, given)) != NEXT:
                break
        await show_step(self, ReportScreen(self._end(session), awaiting=tuple(later),
                                           titles=topic_titles(self.loaded), questions=session.questions))
        await end_flow(self)
        self.refresh_home()

    async def _assess(self, session: Session, given: PendingAssessment,
                      timer: Callable[[], float] | None) -> Feedback | None:
        """Ask for the rubric until it is saved, or None when it is left for later. The answer
        itself is already saved; a failed save of the ticks is offered again at once."""
        from quizprep.tui.screens.rubric import RubricScreen

        ticks: tuple[bool, ...] = ()
        while (met := await show_step(self, RubricScreen(given, timer, ticks))) is not None:
            try:
                feedback = session.assess(given, met)
            except StoreError as error:
                self.store_problem(error)
                ticks = met
                continue
            self._saved(feedback)
            return feedback
        return None

    def on_round_timer_low(self) -> None:
        # Each screen of a round has its own timer; the learner hears the warning once.
        if not self.warned_time_low:
            self.warned_time_low = True
            self.notify("Two minutes left in this round.", title="Mock interview", severity="warning")

    def _end(self, session: Session) -> SessionReport:
        try:
            return session.end()
        except StoreError as error:  # only the session's end time was not saved; answers were
            self.store_problem(error)
            return session.report()

    def _saved(self, feedback: Feedback) -> None:
        self.notify(f"Score {feedback.score:.0%}, rated {feedback.rating.name}.", title="Assessment saved")

    def refresh_home(self) -> None:
        if isinstance(self.screen, HomeScreen):
            self.screen.reload()

    # -- anywhere --------------------------------------------------------------------------

    def action_stats(self) -> None:
        from quizprep.tui.screens.stats import StatsScreen

        assert self.store is not None
        try:
            stats = compute_stats(self.store, self.questions, now=self.now(), tz=self.tz,
                                  titles=topic_titles(self.loaded))
        except StoreError as error:
            self.store_problem(error)
            return
        self.push_screen(StatsScreen(stats))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "history":
            return history_subject(self.screen, self.questions) is not None
        if action == "flag":
            return shown_question(self.screen) is not None
        return True

    def action_history(self) -> None:
        from quizprep.tui.screens.history import open_history

        open_history(self)

    def action_flag(self) -> None:
        from quizprep.tui.screens.flag import ask_flag

        ask_flag(self)

    async def action_quit(self) -> None:
        """Quit; on a question with an answer half typed, once the learner confirms it (the
        draft is saved either way)."""
        leave_then = getattr(self.screen, "leave_then", None)
        if leave_then is None:
            await super().action_quit()
        else:
            leave_then(self.exit)

    def action_help(self) -> None:
        from quizprep.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT if self.theme == DARK else DARK
        if self.store is not None:
            try:
                self.store.set_setting(THEME_SETTING, self.theme)
            except StoreError as error:  # the theme still changes for this run
                self.store_problem(error)
