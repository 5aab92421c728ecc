"""`quizprep quiz` (also what `quizprep` with no command, or with only quiz options, runs): open
the Textual quiz app."""
from __future__ import annotations

import argparse
import math
import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from quizprep.cli.options import add_db_option, any_missing

if TYPE_CHECKING:
    from quizprep.bank.loader import LoadResult
    from quizprep.tui.options import QuizOptions

MODES = ("practice", "review", "mock")
MOST_MINUTES = 24 * 60  # a mock's time limit; far beyond it the time arithmetic overflows
EXAMPLES = """examples:
  quizprep                                  open the app on the home screen
  quizprep --topic memory --mode practice   drill one topic right away
  quizprep --mode review                    what is due today
  quizprep --mode mock --length 5 --minutes 10   a short mock interview
  quizprep --interview 2026-12-15           predicted recall per topic on that day; practice
                                            asks what you would forget first
  quizprep --cram                           drill weak questions; the review schedule is left alone
  quizprep --new-per-day 20 --reviews-per-day 200   daily limits as in Anki, kept for later runs
  quizprep --tag kv-cache --search bytes    only questions tagged kv-cache that mention bytes
  quizprep --question gqa-mqa-definition    the one question a grader report names
  quizprep --db ~/interview.sqlite3         keep progress in this file
  quizprep --bank my-questions/             your own banks instead of the shipped ones"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "quiz", help="open the quiz app (the default command)",
        description="Practise, review what is due, or sit a timed mock interview, in the terminal. "
                    "Progress is saved after every answer. These options also work without "
                    "the word quiz: `quizprep --topic memory`.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--topic", action="append", default=[], metavar="T",
                        help="only this topic (repeatable)")
    parser.add_argument("--bank", action="append", default=[], type=Path, metavar="PATH",
                        help="a bank file or folder instead of the shipped banks (repeatable)")
    add_db_option(parser, "that keeps your answers and review schedule")
    parser.add_argument("--length", type=positive(int), metavar="N",
                        help="at most N questions per session (a mock asks N, 8 by default)")
    parser.add_argument("--minutes", type=positive(float, most=MOST_MINUTES), metavar="M",
                        help="a mock interview's time limit in minutes (default 2.5 a question: 20 for 8)")
    parser.add_argument("--interview", type=interview_date, metavar="DATE",
                        help="the day of your interview: shows predicted recall per topic on it and "
                             "orders practice by it (remembered for later runs)")
    for flag, what in (("--new-per-day", "new questions"), ("--reviews-per-day", "reviews")):
        parser.add_argument(flag, type=daily_limit, metavar="N", default=KEEP,
                            help=f"at most N {what} a day in practice and review, kept for later runs "
                                 "('none': no limit, the default)")
    parser.add_argument("--tag", action="append", default=[], metavar="T",
                        help="only questions with a tag starting with T, e.g. kv: kv-cache (repeatable: any of them)")
    parser.add_argument("--search", default="", metavar="TEXT",
                        help="only questions whose id, prompt, topic or tags contain every word of TEXT")
    start = parser.add_mutually_exclusive_group()
    start.add_argument("--mode", choices=MODES, help="start this kind of session right away")
    start.add_argument("--question", metavar="ID", help="ask this one question right away")
    start.add_argument("--cram", action="store_const", const="cram", dest="mode",
                       help="drill weak questions right away without changing their review schedule")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from quizprep.tui.app import QuizApp

    if any_missing("quiz", args.bank):
        return 2
    loaded = None
    if args.topic or args.question or args.search or args.tag:
        # Read here so that a wrong name fails before the app takes over the terminal; the app
        # is handed the banks and does not read them again.
        from quizprep.bank.loader import default_cache_dir, load_banks

        loaded = load_banks(args.bank or None, cache_dir=default_cache_dir())
        problem = selection_problem(loaded, args.topic, args.question) or filter_problem(loaded, args)
        if problem:
            print(f"quizprep quiz: {problem}", file=sys.stderr)
            return 2
    app = QuizApp(quiz_options(args), loaded=loaded)
    app.run()
    return app.return_code or 0


def quiz_options(args: argparse.Namespace) -> QuizOptions:
    """The app's options from the parsed command line."""
    from quizprep.tui.options import QuizOptions

    given_limits = {key: value for key, value in (("new", args.new_per_day), ("reviews", args.reviews_per_day))
                    if value is not KEEP}
    return QuizOptions(banks=args.bank or None, topics=args.topic, db=args.db, mode=args.mode,
                       question=args.question, length=args.length, minutes=args.minutes,
                       interview=args.interview, search_text=args.search, tags=args.tag,
                       daily_limits=given_limits)


def positive(kind: type, most: float = math.inf) -> Callable[[str], float]:
    """An argparse type: a number of `kind` above zero (and at most `most`), with a message
    saying so otherwise."""
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' if kind is int else ''}number") from None
        if not 0 < value < math.inf:
            raise argparse.ArgumentTypeError(f"{text!r} must be more than 0 (and finite)")
        if value > most:
            raise argparse.ArgumentTypeError(f"{text!r} is more than {most:g}")
        return value

    return parse


KEEP = object()  # a daily limit not given on the command line: the saved one stays


def daily_limit(text: str) -> int | None:
    """An argparse type: a whole number, 0 or more, or "none"."""
    if text.strip().casefold() == "none":
        return None
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 0 or more, nor 'none'")
    return int(text)


def interview_date(text: str) -> date:
    """An argparse type: a date as people type it (see quizprep.study.dates), today or later."""
    from quizprep.study.dates import read_date

    try:
        return read_date(text, date.today())
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def filter_problem(loaded: LoadResult, args: argparse.Namespace) -> str | None:
    """Why --search and --tag leave no question (or leave out --question), or None."""
    if not (args.search or args.tag):
        return None
    from quizprep.study.search import search

    pool = [q for q in loaded.questions if not args.topic or q.topic in args.topic]
    found = {q.id for q in search(pool, args.search, args.tag)}
    asked = " ".join([f"--search {args.search!r}"] * bool(args.search) + [f"--tag {tag}" for tag in args.tag])
    known = sorted({tag.casefold() for question in pool for tag in question.tags})
    unknown = [tag for tag in args.tag if tag.casefold() not in known]
    if not found and unknown:
        import difflib

        close = sorted({match for tag in unknown for match in difflib.get_close_matches(tag.casefold(), known, n=3)})
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        return f"no question is tagged {', '.join(unknown)}{hint}; the {len(known)} tags are: {', '.join(known)}"
    if not found:
        return f"no question matches {asked}"
    if args.question and args.question not in found:
        return f"question {args.question} does not match {asked}"
    return None


def selection_problem(loaded: LoadResult, topics: Sequence[str], question_id: str | None) -> str | None:
    """Why --topic or --question names nothing in the banks, or None when both are fine."""
    known = sorted({question.topic for question in loaded.questions})
    unknown = [topic for topic in topics if topic not in known]
    if unknown:
        return f"no questions in topic(s) {', '.join(unknown)}; the topics are: {', '.join(known)}"
    if question_id is None:
        return None
    by_id = {question.id: question for question in loaded.questions}
    if question_id not in by_id:
        close = close_ids(question_id, by_id)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"no question has id {question_id!r}{hint}"
    topic = by_id[question_id].topic
    if topics and topic not in topics:
        return f"question {question_id} is in topic {topic}, which --topic leaves out"
    return None


SUGGESTED = 3


def close_ids(given: str, ids: Iterable[str]) -> list[str]:
    """Ids like `given`: those containing it ("gqa": gqa-mqa-definition...; a part of an id is
    what a learner remembers, and difflib finds no long id close to it), else the closest spellings."""
    import difflib

    ids = sorted(ids)
    containing = [qid for qid in ids if given.casefold() in qid.casefold()]
    if containing:
        more = len(containing) - SUGGESTED
        return containing[:SUGGESTED] + ([f"or {more} more containing {given!r}"] if more > 0 else [])
    return difflib.get_close_matches(given, ids, n=SUGGESTED)
