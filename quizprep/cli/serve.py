"""`quizprep serve`: the quiz app in a browser, through textual-serve.

Each browser tab that opens the page starts its own `quizprep quiz` process on the same progress
database (the store takes two writers), so the server itself never imports the app.
"""
from __future__ import annotations

import argparse
import ipaddress
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quizprep.cli.options import add_db_option

if TYPE_CHECKING:
    from textual_serve.server import Server

DEFAULT_PORT = 8000
LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")
WHY_LOCAL = ("the page has no login: anyone who can reach the port can answer questions into your progress "
             "database and read its history")
EXAMPLES = """examples:
  quizprep serve                         open http://localhost:8000 in a browser
  quizprep serve --port 9000 --db class.sqlite3
  quizprep serve -- --topic memory       quiz options for every tab go after --
  quizprep serve --host 0.0.0.0 --public a classroom on a network you trust"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve", help="serve the quiz app to a web browser",
        description="The quiz app in a browser tab: each tab is its own quiz on the same progress "
                    f"database. Listens on this machine only unless --public, since {WHY_LOCAL}.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="localhost", help="address to listen on (default: localhost)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT})")
    parser.add_argument("--public", action="store_true",
                        help="allow an address other machines can reach")
    add_db_option(parser, "that every tab records into")
    parser.add_argument("quiz_args", nargs=argparse.REMAINDER, metavar="-- QUIZ OPTIONS",
                        help="options of `quizprep quiz` for every tab, e.g. -- --topic memory")
    parser.set_defaults(handler=run)


def is_local(host: str) -> bool:
    """Whether `host` is reachable from this machine only (a loopback name or address)."""
    if host.lower() in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def quiz_command(db: Path | None, quiz_args: list[str]) -> str:
    """The shell command each tab runs: this interpreter's quizprep, on one resolved database."""
    from quizprep.study.dbpath import resolve_db_path

    argv = [sys.executable, "-m", "quizprep", "quiz", "--db", str(resolve_db_path(db).resolve()), *quiz_args]
    return shlex.join(argv)


def quiz_args_problem(quiz_args: list[str]) -> str | None:
    """Why the quiz options would make every tab fail, checked before anything listens (argparse
    itself prints a malformed option's error and exits 2)."""
    from quizprep.cli import build_parser

    args = build_parser(("quizprep.cli.quiz",)).parse_args(["quiz", *quiz_args])
    if args.db is not None:
        return "give --db before the quiz options, to serve itself"
    return None


def run(args: argparse.Namespace) -> int:
    if not is_local(args.host) and not args.public:
        print(f"quizprep serve: refusing to listen on {args.host}: {WHY_LOCAL}. "
              "Add --public to do it anyway, on a network you trust.", file=sys.stderr)
        return 2
    quiz_args = args.quiz_args[1:] if args.quiz_args[:1] == ["--"] else args.quiz_args
    problem = quiz_args_problem(quiz_args)
    if problem:
        print(f"quizprep serve: {problem}", file=sys.stderr)
        return 2
    server = make_server(quiz_command(args.db, quiz_args), args.host, args.port)
    try:
        server.serve()
    except OSError as error:  # the port is taken, or the address is not this machine's
        print(f"quizprep serve: cannot listen on {args.host}:{args.port}: {error.strerror or error}",
              file=sys.stderr)
        return 1
    return 0


def make_server(command: str, host: str, port: int) -> Server:
    from textual_serve.server import Server

    class QuizServer(Server):
        """textual-serve's server, saying plainly where it listens and what a tab is."""

        async def on_startup(self, app: Any) -> None:
            print(f"quizprep is served at {self.public_url}  (open it in a browser; each tab is its own "
                  "quiz on one progress database; Ctrl+C stops)", flush=True)

    return QuizServer(command, host=host, port=port, title="quizprep")
