"""`quizprep serve`: the quiz app in a browser, checked in a real one (Debian's Chromium driven by
Playwright, so nothing is downloaded at test time)."""
from __future__ import annotations

import contextlib
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from quizprep.cli import main
from quizprep.cli.serve import is_local, quiz_command

DATA = Path(__file__).parent / "tui" / "data"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# The flags a headless Chromium needs as root on a machine with no network (no sandbox, no GPU,
# no calls home at start).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "127.0.0.2", "::1", "[::1]"])
def test_loopback_addresses_are_local(host):
    assert is_local(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.org", ""])
def test_other_addresses_are_not(host):
    assert not is_local(host)


def test_a_reachable_address_is_refused_without_public_and_says_why(capsys):
    assert main(["serve", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert "refusing to listen on 0.0.0.0" in err and "no login" in err and "--public" in err


def test_quiz_options_are_checked_before_anything_listens(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["serve", "--", "--topc", "memory"])
    assert stopped.value.code == 2 and "--topc" in capsys.readouterr().err


def test_db_given_among_the_quiz_options_is_refused(capsys, tmp_path):
    assert main(["serve", "--", "--db", str(tmp_path / "x.db")]) == 2
    assert "give --db before the quiz options" in capsys.readouterr().err


def test_each_tab_runs_this_interpreters_quiz_on_one_absolute_database(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    command = quiz_command(Path("progress.db"), ["--topic", "memory lane"])
    assert command.startswith((sys.executable, f"'{sys.executable}'"))
    assert f"quiz --db {tmp_path / 'progress.db'} --topic 'memory lane'" in command


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def served(db: Path, *quiz_args: str) -> Iterator[str]:
    """`quizprep serve` in its own process; yields the address it says it listens on."""
    server = subprocess.Popen([sys.executable, "-m", "quizprep", "serve", "--port", str(free_port()),
                               "--db", str(db), "--", *quiz_args],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert "quizprep is served at http://localhost:" in line, line
        yield line.split("served at ", 1)[1].split()[0]
    finally:
        server.terminate()
        server.wait(10)


def wait_for(query: str, db: Path, seconds: float = 60.0) -> list[tuple]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if db.exists():
            with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as reader, \
                    contextlib.suppress(sqlite3.OperationalError):  # tables not made yet
                rows = reader.execute(query).fetchall()
                if rows:
                    return rows
        time.sleep(0.2)
    raise AssertionError(f"nothing in {db.name} for {query!r} after {seconds:g} s")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (Debian: apt-get install chromium)")
def test_a_question_answered_with_keys_in_a_browser_is_in_the_database(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    db = tmp_path / "progress.db"
    with served(db, "--bank", str(DATA / "alpha.yaml"), "--question", "alpha-choice") as url, \
            sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 700})
            page.goto(url)
            page.wait_for_selector("body.-first-byte", timeout=60_000)  # the app's first bytes arrived
            wait_for("SELECT id FROM sessions", db)  # the question's session started: the app takes keys
            page.locator("textarea").first.focus()  # xterm.js reads keys from its hidden textarea
            page.keyboard.press("1")
            page.keyboard.press("Enter")
            answers = wait_for("SELECT question_id, response FROM answers", db)
        finally:
            browser.close()
    assert [question for question, _ in answers] == ["alpha-choice"]
    assert answers[0][1], "the answer was recorded without the pick"
