"""The grader's side of the isolation: one worker process per grade run, restarted after a crash.

Every failure of the learner's code — an exception, a syntax error, `sys.exit`, `os._exit`,
a segfault, an infinite loop, running out of memory, a forbidden call — comes back from
:meth:`WorkerSession.request` as a :class:`LearnerFailure` carrying a plain-language reason,
the learner's own traceback lines and the tail of what their code printed.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quizprep.grader import private_dirs, submission_file, usage
from quizprep.grader.jail import policy as jail_policy
from quizprep.grader.jail.made import WorkerJail
from quizprep.grader.learner_side import protocol, sandbox
from quizprep.grader.learner_side.forkserver import ForkedProcess, ForkServer
from quizprep.grader.device import gpu_memory_share
from quizprep.grader.failures import LearnerFailure, ended, failure_from
from quizprep.grader.learner_side.sandbox import gpu_device_nodes
from quizprep.grader.output import OutputCapture, frames_from_dump, strip_dump
from quizprep.grader.spec import FailureKind

WORKER_SCRIPT = Path(__file__).parent / "learner_side" / "worker.py"
Process = subprocess.Popen[bytes] | ForkedProcess
GIB = 1 << 30
SYNC_WAIT_SECONDS = 2.0  # only reached when learner code closed its stdout
OVERALL_LIMIT = "running this check, when the overall time limit ran out"
OVERALL_MESSAGE = "was stopped when the overall time limit ({seconds:g} s) ran out"


@dataclass(frozen=True)
class Limits:
    """Resource limits for the learner's process. Times are wall-clock seconds."""

    check_seconds: float = 20.0
    total_seconds: float = 300.0
    startup_seconds: float = 60.0
    memory_bytes: int = 2 * GIB
    output_bytes: int = 4096
    threads: int = 1
    reply_bytes: int = 64 << 20  # a check's outputs are small: a larger reply is refused unread
    file_bytes: int = 64 << 20  # the largest file it may write (in its private directory only)
    private_bytes: int = 256 << 20  # all it may store in its private directory together
    max_threads: int = 64  # threads beyond the `threads` torch computes with

    def on(self, device: str) -> Limits:
        """These limits for a worker whose checks run on `device`: a CUDA context reserves tens of
        GiB of address space, so RLIMIT_AS would break it; on GPU the per-check time limit and
        CUDA's own out-of-memory errors bound the damage."""
        return dataclasses.replace(self, memory_bytes=0) if device.startswith("cuda") else self


class WorkerSession:
    """Runs the learner's file in a child process and relays requests to it. With `fork_server`,
    the process is forked from one that has imported torch already (see forkserver.py)."""

    def __init__(self, path: Path, *, forbidden: tuple[str, ...] | None = (), limits: Limits = Limits(),
                 python: str = sys.executable, script: Path = WORKER_SCRIPT,
                 fork_server: ForkServer | None = None, warm_up: bool = True) -> None:
        self.path = submission_file.canonical(path)  # its own name never followed: see submission_file
        self.warm_up = warm_up  # False: the worker skips torch's autograd and meta-device warm-ups
        self.forbidden = forbidden
        self.limits = limits
        self.python = python
        self.script = script  # the perf phase runs a worker that adds its requests to these
        self.fork_server = fork_server
        self.process: Process | None = None
        self.messages = 0
        self.output: OutputCapture | None = None
        self.load_info: dict[str, Any] | None = None
        self.host_copies: list[dict[str, Any]] = []  # tensors the loaded file read into NumPy during calls
        self.request_w = self.response_r = -1
        self.starts = 0
        self.process_groups: list[int] = []
        self.protections: dict[str, Any] = {}
        self.private_dir: str | None = None
        self.deadline: float | None = None  # the grade's overall limit (time.monotonic), which no request outlasts
        self.launched_at: int | None = None  # the output mark of a process launched and not yet waited for
        self.jail = WorkerJail(None, "not started")

    # ---- life cycle ---------------------------------------------------------------------
    def start(self) -> dict[str, Any]:
        """Start the worker (unless `launch` already did) and load the learner's file; raises
        LearnerFailure if it does not load."""
        if self.launched_at is None:
            self.launch()
        mark, self.launched_at = self.launched_at, None
        assert mark is not None
        prepared = self._receive(*self._until(self.limits.startup_seconds, "starting Python and torch"), mark)
        self.protections = {"jail": self.jail.summary(), **prepared.get("sandbox", {})}
        info = self._receive(*self._until(self.limits.check_seconds, "loading your file"), mark)
        if not info.get("ready"):
            failure = self._failure_from(info.get("error", {}), mark, info.get("forbidden", []))
            self.close()
            raise failure
        self.load_info, self.host_copies = info, []
        return info

    def launch(self) -> None:
        """Start the worker's process without waiting for it: it imports torch and loads the file
        meanwhile (a worker needed later, started early). `start` waits for it."""
        self.close()
        self.private_dir = private_dirs.make()  # the only place it may write
        self.jail = WorkerJail.make(self.private_dir, private_bytes=self.limits.private_bytes,
                                    threads=self.limits.threads, max_threads=self.limits.max_threads,
                                    gpu=bool(gpu_device_nodes()), python=self.python, forked=bool(self.fork_server))
        copy = self._copy_submission()
        request_r, self.request_w = os.pipe()
        self.response_r, response_w = os.pipe()
        config = {
            "path": str(self.path),
            "copy": copy,
            "request_fd": request_r,
            "response_fd": response_w,
            "memory_limit_bytes": self.limits.memory_bytes,
            "forbidden": None if self.forbidden is None else list(self.forbidden),  # None: sent by `configure`
            "threads": self.limits.threads,
            "cpu_seconds": self.limits.total_seconds + self.limits.startup_seconds,
            "private_dir": self.private_dir,
            "file_bytes": self.limits.file_bytes,
            "reply_bytes": self.limits.reply_bytes,  # a larger reply is refused there, before it is made
            "gpu_memory_fraction": gpu_memory_share(),
            "warm_up": self.warm_up,
            **self.jail.worker_config(os.getpid()),
        }
        sandbox.make_undumpable()
        self.process = self._launch(config, request_r, response_w)
        self.process_groups.append(self.process.pid)
        self.output = OutputCapture(self.process.stdout, self.limits.output_bytes)
        self.messages = 0
        self.starts += 1
        self.launched_at = self.output.mark()

    def _launch(self, config: dict[str, Any], request_r: int, response_w: int) -> Process:
        """The worker process; the child's ends of its pipes are closed here once it has them."""
        if self.fork_server is not None:
            try:
                return self.fork_server.spawn(config, request_r, response_w)
            finally:
                os.close(request_r)
                os.close(response_w)
        env = jail_policy.worker_env(self.limits.threads, self.private_dir or "")
        command = self.jail.command([self.python, str(self.script), json.dumps(config)])
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            pass_fds=(request_r, response_w), start_new_session=True, env=env, cwd="/",
        )
        os.close(request_r)
        os.close(response_w)
        return process

    def configure(self, forbidden: tuple[str, ...]) -> None:
        """The guards of a worker launched before the exercise was known (`prestart`): it waits
        for them after importing torch, before it loads anything of the learner's."""
        assert self.forbidden is None and self.launched_at is not None
        self.forbidden = forbidden
        try:
            protocol.write_message(self.request_w, {"forbidden": list(forbidden)})
        except OSError:
            pass  # the worker is gone: `start` says why

    @property
    def worker_pid(self) -> int | None:
        """The learner's process (jailed: below bubblewrap's two), for its threads and SIGUSR1."""
        return None if self.process is None else self.jail.worker_pid(self.process.pid)

    def switch(self, path: Path, forbidden: tuple[str, ...]) -> dict[str, Any]:
        """Load another file, reusing the running process (torch is imported once) when it guards
        the same calls: the guards of a running worker cannot be lifted."""
        same_guards = self.forbidden is not None and set(forbidden) == set(self.forbidden)
        self.path, self.forbidden = submission_file.canonical(path), forbidden
        if not self.alive or not same_guards or self.launched_at is not None:  # launched: not yet loaded
            return self.start()
        response = self.request({"op": "load", "path": str(self.path), "copy": self._copy_submission(),
                                 "forbidden": list(forbidden)}, timeout=self.limits.check_seconds)
        try:
            info = protocol.checked_reply(response["value"])
        except protocol.ProtocolError as error:
            self.close()
            raise LearnerFailure(FailureKind.PROTOCOL, f"the result could not be read back ({error})") from None
        if not info.get("ready"):
            assert self.output is not None
            failure = self._failure_from(info.get("error", {}), self.output.mark(), info.get("forbidden", []))
            raise failure
        self.load_info, self.host_copies = info, []
        return info

    def _copy_submission(self) -> str:
        """The learner's file, copied where its confined process can read it (its folder cannot be):
        read once, through descriptors that follow no link, so the file checked is the file graded."""
        assert self.private_dir is not None
        copy = os.path.join(self.private_dir, "submission.py")
        try:
            source = submission_file.read_bytes(self.path, self.limits.file_bytes)
            # unjailed, a reused worker may have left a link of its own here: removed, never written through
            with contextlib.suppress(FileNotFoundError):
                os.unlink(copy)
            with open(copy, "xb") as written:
                written.write(source)
        except OSError as error:
            self.close()
            reason = error.strerror or str(error)
            raise LearnerFailure(FailureKind.LOAD, f"your file could not be read: {reason}") from None
        return self.jail.inside(copy)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """Kill the worker's process group, and only that: safe from another thread while the
        session's own thread reads or writes its pipes. That thread then meets the end of the
        pipe and closes them (`close`); closed here, their numbers could be reused by a file
        opened meanwhile, which the owning thread would then read, write or close."""
        process = self.process
        if process is not None:
            _kill_group(process.pid)

    def close(self) -> None:
        """Kill the worker's whole process group and release the pipes (from the session's own thread)."""
        self.launched_at = None
        if self.process is not None:
            self.kill()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail
                pass
            if self.output is not None:
                self.output.thread.join(timeout=1)  # the pipe is at its end: let the reader finish
            if self.process.stdout is not None:
                self.process.stdout.close()
            self.process = None
        for fd in (self.request_w, self.response_r):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.request_w = self.response_r = -1
        if self.private_dir is not None:
            shutil.rmtree(self.private_dir, ignore_errors=True)
            self.private_dir = None
        self.jail.remove()

    def __enter__(self) -> WorkerSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- requests -----------------------------------------------------------------------
    def request(self, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one request; return the worker's successful response or raise LearnerFailure."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise LearnerFailure(FailureKind.TIMEOUT, OVERALL_MESSAGE.format(seconds=self.limits.total_seconds))
        if not self.alive:
            self.start()
        assert self.output is not None and self.process is not None
        mark = self.output.mark()
        # The in-process memory audit can be replaced by the code it audits, sees only torch and
        # only the calling thread: the process's peak and its other threads are read from outside too.
        worker = self.worker_pid  # jailed, the learner's process is below bubblewrap's two, whose memory is not its own
        watch = usage.CallWatch(worker, self.limits.threads) \
            if payload.get("memory_audit") and worker is not None else None
        try:
            protocol.write_message(self.request_w, payload)
        except (BrokenPipeError, OSError):
            return self._crashed(mark, {}, during="receiving the inputs")
        response = self._receive(*self._until(timeout or self.limits.check_seconds, "running this check"), mark)
        if response.get("ok") and "value" not in response:
            self.close()
            raise LearnerFailure(FailureKind.PROTOCOL, "the result could not be read back (a reply without a value)")
        if not response.get("ok"):
            raise self._failure_from(response.get("error", {}), mark, response.get("forbidden", []))
        if response.get("forbidden"):
            raise self._failure_from({"kind": "forbidden", "message": "", "frames": []}, mark, response["forbidden"])
        if watch is not None:
            response.update(watch.finish())
        self.host_copies += response.get("host_copies") or []
        return response

    def _until(self, seconds: float, during: str) -> tuple[float, str]:
        """When a wait of `seconds` ends, and what it is called then: the grade's overall limit
        where that comes first."""
        now = time.monotonic()
        if self.deadline is not None and self.deadline - now < seconds:
            return max(self.deadline, now), OVERALL_LIMIT
        return now + seconds, during

    def _receive(self, deadline: float, during: str, mark: int) -> dict[str, Any]:
        event: dict[str, Any] = {}
        while True:
            try:
                message = protocol.checked_reply(
                    protocol.read_message(self.response_r, usage.DeadlineReader(deadline, self._over_limits),
                                          self.limits.reply_bytes))
            except usage.OverLimit as problem:
                raise self._stopped(str(problem), during) from None
            except TimeoutError:
                return self._timed_out(mark, during)
            except (EOFError, OSError):
                return self._crashed(mark, event, during)
            except protocol.ProtocolError as error:
                self.close()
                raise LearnerFailure(FailureKind.PROTOCOL, f"the result could not be read back ({error})") from None
            over = self._over_limits()  # a call faster than one poll is counted too
            if over:
                raise self._stopped(over, during)
            self.messages += 1
            if "event" in message:
                event = message
                continue
            assert self.output is not None
            self.output.wait_for_syncs(self.messages, SYNC_WAIT_SECONDS)
            return message

    def _stopped(self, problem: str, during: str) -> LearnerFailure:
        self.close()
        return LearnerFailure(FailureKind.RESOURCES, f"the process running your code {problem} and was stopped "
                                                     f"while {during}")

    def _over_limits(self) -> str:
        pid = self.worker_pid
        if pid is None:
            return ""
        stored = None if self.private_dir is None else self.jail.private_dir_seen_from_outside(pid, self.private_dir)
        return usage.over_limits(pid, stored, self.limits.max_threads + self.limits.threads, self.limits.private_bytes)

    def _timed_out(self, mark: int, during: str) -> dict[str, Any]:
        assert self.process is not None and self.output is not None
        try:
            os.kill(self.worker_pid or self.process.pid, signal.SIGUSR1)  # faulthandler prints where it is stuck
            time.sleep(0.3)
        except ProcessLookupError:
            pass
        output = self.output.since(mark)
        self.close()
        frames = frames_from_dump(output, str(self.path))
        limit = self.limits.startup_seconds if during.startswith("starting") else self.limits.check_seconds
        message = (OVERALL_MESSAGE.format(seconds=self.limits.total_seconds) if during == OVERALL_LIMIT else
                   f"did not finish within {limit:g} s while {during} (an infinite loop, or far too slow) "
                   "and was stopped")
        raise LearnerFailure(FailureKind.TIMEOUT, message, frames[-3:], strip_dump(output))

    def _crashed(self, mark: int, event: dict[str, Any], during: str) -> dict[str, Any]:
        assert self.process is not None and self.output is not None
        try:
            status = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = None
        time.sleep(0.05)
        output = self.output.since(mark)
        self.close()
        raise ended(self.jail.exit_status(status), event, output, during, str(self.path))

    def _failure_from(self, error: dict[str, Any], mark: int, forbidden: list[dict[str, Any]]) -> LearnerFailure:
        assert self.output is not None
        return failure_from(error, forbidden, self.output.since(mark), str(self.path))


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass

