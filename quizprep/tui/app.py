"""The quiz app: loads the banks, opens the progress store, shows Home and handles what its
screens ask for; sessions run screen by screen in quizprep.tui.flow."""
from __future__ import annotations

import gc
import random
from datetime import tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Sequence, TypeVar

from textual import events, work
from textual.app import App
from textual.binding import Binding

from quizprep.tui.banks import Banks
from quizprep.study.clock import Clock, utc_now
from quizprep.study.store import Store, StoreError
from quizprep.tui.flow import SessionFlow
from quizprep.tui.notices import notify_database, notify_start
from quizprep.tui.options import QuizOptions
from quizprep.tui.home_data import forecast, home_view, remember_interview
from quizprep.tui.screens.home import HomeScreen, HomeView
from quizprep.tui.screens.step import KeyHold, Step, typed_enter
from quizprep.tui.subject import has_history_subject, history_subject, shown_question

if TYPE_CHECKING:
    from quizprep.bank.loader import LoadResult
    from quizprep.bank.model import Question
    from quizprep.bank.summary import BankSummary, QuestionRef
    from quizprep.study.interview import Forecast
    from quizprep.study.session import Session
    from textual.screen import Screen

    from quizprep.tui.screens.interview_date import InterviewDateScreen

# Sessions and the other screens (Markdown, TextArea...) are imported where they are first
# needed: cold start to the home screen is measured and kept close to a bare Textual app's.

Q = TypeVar("Q", bound="Question | QuestionRef")  # a question, or what Home counts of one

DARK, LIGHT = "textual-dark", "textual-light"
THEME_SETTING = "theme"
LENGTH_SETTING = "length"  # the session length last chosen on Home (l)
# A write waits at most this long for another program's lock: the app's screen cannot redraw
# while it waits, so a held lock is waited out in short, visible attempts instead.
BUSY_TIMEOUT_S = 1.0
# Every screen but Home takes its rules from screens.tcss (see load_screen_styles).
SCREENS_CSS = Path(__file__).with_name("screens.tcss")


def saved_length(value: str | None) -> int | None:
    """The length saved on Home; None for "all", never saved or garbled."""
    return int(value) if value and value.isdigit() and int(value) > 0 else None


class QuizApp(App[None]):
    """`quizprep quiz` with the command line's `options`. `now`, `tz` and `seed` are injectable
    so tests and snapshots see fixed times and draws; `loaded` is the banks when the command
    line has already read them (to check --topic and --question)."""

    CSS_PATH = Path(__file__).with_name("quizprep.tcss")
    # What Home does not show waits this long after its first frame, while the learner reads it:
    # the other screens' rules, the banks in full, the check of every row (see while_home_is_read).
    AFTER_FIRST_FRAME_S = 0.1
    TITLE = "quizprep"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        # F1 is the key shown: it opens help on every screen, while `?` is typed in an answer.
        Binding("f1", "help", "Help"),
        Binding("question_mark", "help", "Help", show=False),
        Binding("ctrl+t", "toggle_theme", "Theme", priority=True, show=False),  # in help; footers are full
        Binding("h", "history", "History", show=False),  # in help: a choice question's footer cut off ^f Flag
        Binding("ctrl+f", "flag", "Flag"),
    ]

    def __init__(self, options: QuizOptions | None = None, *, loaded: LoadResult | None = None,
                 now: Clock = utc_now, tz: tzinfo | None = None, seed: int | None = None) -> None:
        super().__init__()
        self.options = options = options or QuizOptions()
        # What the learner may change while the app runs, starting from the command line's.
        self.length = options.length  # None: the length saved last time, else the builders' default
        self.interview = options.interview  # None: the date saved by an earlier run, if any (see on_load)
        self.search_text = options.search_text
        self.tags = tuple(options.tags)
        self.now = now
        self.tz = tz
        self.rng = random.Random(seed)
        self.busy_timeout_s = BUSY_TIMEOUT_S  # also how long the flow's "waiting" notes stay up
        self.store: Store | None = None
        self.banks = Banks(options.banks, loaded)
        self._questions: list[Question] | None = None
        self.key_hold = KeyHold(self)
        self.flow = SessionFlow(self)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and event.key == "ctrl+j":
            event = typed_enter(event)
        if self.key_hold.take(event):
            return
        screen = self.screen_stack[-1] if self.screen_stack else None
        if isinstance(event, events.Key) and not event.is_forwarded:
            if isinstance(screen, Step) and screen.comes_back(event):
                self.key_hold.hold_behind(event)
            elif isinstance(screen, HomeScreen) and screen.starts_session(event.key):
                # The keys typed straight after it are the first question's, whose screen comes
                # only once the session is built (the first time, its modules imported).
                self.key_hold.hold_behind(event, until_step=True)
            if self.key_hold.trigger is event:
                await super().on_event(event)  # sent to the field; it comes back here to run its binding
                return
        await super().on_event(event)
        self.key_hold.handled(event)

    def on_load(self) -> None:
        # Load runs before the first screen is built, so Home can be that screen (no second one
        # composed and swapped in), and a database that cannot open stops the app before the
        # terminal is taken over.
        # Until the first screen is up, everything built (banks, widgets, styles) is kept: cycle
        # collections over it find nothing and took about 16 ms of a cold start.
        gc.disable()
        self.theme = DARK
        self.banks.read_summary()
        try:
            self.store = Store.open(self.options.db, busy_timeout_s=self.busy_timeout_s, check_rows=False)
            self.store.adopt_merged(self.summary.merged)
            remember_interview(self)
            self._save_daily_limits()
            if self.length is None:
                self.length = saved_length(self.store.setting(LENGTH_SETTING))
            saved = self.store.setting(THEME_SETTING)
        except StoreError as error:
            self.exit(return_code=1, message=f"quizprep: {error}")
            return
        if saved in self.available_themes:  # a name an older or newer Textual knows is left alone
            self.theme = saved

    def _save_daily_limits(self) -> None:
        if self.options.daily_limits:  # else the limits module is loaded when a session is built
            from quizprep.tui.daily import save_given_limits

            assert self.store is not None
            save_given_limits(self.store, self.options.daily_limits)

    @property
    def loaded(self) -> LoadResult:
        """The banks in full (a session, the search, stats...; see `read_banks`)."""
        return self.banks.load()

    @property
    def summary(self) -> BankSummary:
        return self.banks.summary

    @property
    def questions(self) -> list[Question]:
        """What sessions ask from: the banks' questions in --topic's topics, matching the search."""
        if self._questions is None:
            self._questions = self._matching()
        return self._questions

    def in_topics(self, questions: Sequence[Q]) -> list[Q]:
        topics = self.options.topics
        return [q for q in questions if not topics or q.topic in topics]

    def _matching(self) -> list[Question]:
        pool = self.in_topics(self.loaded.questions)
        if not (self.search_text or self.tags):
            return pool  # the usual start: the search module is not loaded
        from quizprep.study.search import search

        return search(pool, self.search_text, self.tags)

    def forecast(self) -> Forecast | None:
        """Predicted recall per topic on the interview date; None when no date is set."""
        return forecast(self)

    def get_default_screen(self) -> HomeScreen:
        return HomeScreen(self._home_view, search_text=self.search_text, tags=self.tags, length=self.length,
                          minutes=self.options.minutes)

    def _home_view(self) -> HomeView:
        return home_view(self)

    def on_mount(self) -> None:
        assert self.store is not None
        notify_start(self, self.store.notices, self.summary, self.options.topics)
        self.resume_and_start()
        self.call_after_refresh(gc.enable)
        self.call_after_refresh(self.set_timer, self.AFTER_FIRST_FRAME_S, self.while_home_is_read)

    def while_home_is_read(self) -> None:
        """Prepare what comes after Home. Each is also done at once where it is needed first (a
        key pressed before this runs, e.g. typed ahead): the rules as a screen opens, the banks
        as a session or a search starts."""
        self.load_screen_styles()
        self.read_banks()
        self.check_rows()

    def load_screen_styles(self) -> None:
        """Add the other screens' rules to the stylesheet, once, parsing only them: Textual's way
        for a screen's `CSS_PATH` parses every source again in a fresh stylesheet and restyles
        the app (+500 ms on the first Help, benchmarks/README.md). Home is not restyled: none of
        these rules applies to it. Parsing all the rules before the first frame was 39 M of the
        1,392 M instructions of a start."""
        if not self.screen_styles_loaded:
            self.stylesheet.read(SCREENS_CSS)
            self.stylesheet.parse()  # the sources parsed before come from the stylesheet's cache

    @property
    def screen_styles_loaded(self) -> bool:
        return self.stylesheet.has_source(str(SCREENS_CSS))

    def _load_screen_css(self, screen: Screen[object]) -> None:
        # Textual calls this for every screen it is about to show (pushed, switched to, a mode's).
        if not isinstance(screen, HomeScreen):
            self.load_screen_styles()
        super()._load_screen_css(screen)

    def on_unmount(self) -> None:
        gc.enable()  # also when the app ends before its first screen
        if self.store is not None:
            self.store.close()

    @work(thread=True, exit_on_error=False, group="banks")  # on failure the first use loads them again
    def read_banks(self) -> None:
        """Load the banks in full while the learner reads Home, so that the first session (or
        search) finds them loaded: from the cache, ≈ 50 ms (the bank model's import, unpickling).
        What is built so far is then kept out of every later collection (`gc.freeze`): it lives
        as long as the app, and the first session's collections went through all of it, ≈ 50 ms
        of its CPU (a full collection here instead took as long, holding the interpreter)."""
        self.banks.load()
        gc.freeze()

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
        notify_database(self, notices)
        self.refresh_home()

    def store_problem(self, error: StoreError) -> None:
        """Say what went wrong with the progress database; the app carries on."""
        notify_database(self, [str(error)])

    def refresh_home(self) -> None:
        if isinstance(self.screen, HomeScreen):
            self.screen.reload()

    # -- what Home and its dialogs ask for -------------------------------------------------

    def on_home_screen_start_session(self, message: HomeScreen.StartSession) -> None:
        self.start_session(message.mode, message.topics)

    def on_home_screen_search_changed(self, message: HomeScreen.SearchChanged) -> None:
        """Home's counts and every session draw from the questions matching the search."""
        self.search_text, self.tags = message.text, message.tags
        self._questions = None
        self.refresh_home()

    def on_home_screen_length_chosen(self, message: HomeScreen.LengthChosen) -> None:
        """The length applies from now on, also to later runs."""
        assert self.store is not None
        self.length = message.length
        try:
            self.store.set_setting(LENGTH_SETTING, str(message.length or "all"))
        except StoreError as error:  # the length still applies to this run
            self.store_problem(error)

    def action_interview_date(self) -> None:
        from quizprep.tui.screens.interview_date import InterviewDateScreen

        self.push_screen(InterviewDateScreen(self.interview, self.now().date()))

    def on_interview_date_screen_chosen(self, message: InterviewDateScreen.Chosen) -> None:
        """Keep the date for this run and later ones."""
        from quizprep.study.interview import SETTING, save_date

        if self.store is None:
            return
        try:
            if message.on is None:
                self.store.set_setting(SETTING, "")
            else:
                save_date(self.store, message.on)
        except StoreError as error:
            self.store_problem(error)
            return
        self.interview = message.on
        self.refresh_home()

    # -- sessions (see quizprep.tui.flow) ------------------------------------------------

    @work(exclusive=True, group="session")
    async def resume_and_start(self) -> None:
        """Offer free responses left unassessed last time, then start the --question or --mode
        session if any."""
        assert self.store is not None
        if self.store.unassessed():  # checked here first: the session module is not needed at start
            await self.flow.assess_left_over()
        if self.options.question:
            await self._start("practice", self.options.topics, self.options.question)
        elif self.options.mode:
            await self._start(self.options.mode, self.options.topics)

    @work(exclusive=True, group="session")
    async def start_session(self, mode: str, topics: Sequence[str]) -> None:
        await self._start(mode, topics)

    async def _start(self, mode: str, topics: Sequence[str], question: str | None = None) -> None:
        session = await self.flow.build(mode, topics, question)
        if session is None:
            self.key_hold.let_go()  # nothing to ask: keys typed after the one that asked are Home's
        else:
            self.run_session(session)

    @work(exclusive=True, group="session")
    async def run_session(self, session: Session) -> None:
        await self.flow.run(session)

    def on_round_timer_low(self) -> None:
        self.flow.warn_time_low()

    # -- anywhere --------------------------------------------------------------------------

    def action_stats(self) -> None:
        from quizprep.study.charts import progress_charts
        from quizprep.study.stats import compute_stats
        from quizprep.tui.screens.stats import StatsScreen

        assert self.store is not None
        titles = self.loaded.titles()
        try:
            stats = compute_stats(self.store, self.questions, now=self.now(), tz=self.tz, titles=titles)
            charts = progress_charts(self.store, self.questions, self.now(), self.tz, titles)
        except StoreError as error:
            self.store_problem(error)
            return
        self.push_screen(StatsScreen(stats, charts))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "history":
            return has_history_subject(self.screen)  # without loading the banks for Home's footer
        if action == "flag":
            return shown_question(self.screen) is not None
        return True

    def action_history(self) -> None:
        """The history of what the learner is looking at (see `history_subject`)."""
        from quizprep.tui.screens.history import HistoryScreen

        subject = history_subject(self.screen, self.questions)
        if subject is not None and self.store is not None:
            questions, title = subject
            self.push_screen(HistoryScreen(self.store, questions, self.now().astimezone(self.tz), title))

    def action_flag(self) -> None:
        """Ask what is wrong with the question shown; the reason goes beside the database."""
        from quizprep.study.flags import flags_path
        from quizprep.tui.screens.flag import FlagScreen

        question = shown_question(self.screen)
        if question is not None:
            self.push_screen(FlagScreen(question, flags_path(self.options.db), self.now))

    async def action_quit(self) -> None:
        """Quit; on a question with an answer half typed, once the learner confirms it (the
        draft is saved either way)."""
        leave_then = getattr(self.screen, "leave_then", None)
        if leave_then is None:
            await super().action_quit()
        else:
            leave_then(self.exit, quitting=True)

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
