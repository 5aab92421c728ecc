"""A process that has imported torch and forks one fresh worker per submission.

Grading a class reuses the torch import (seconds) without reusing a process that learner code
ran in: a submission that monkeypatches torch, leaves a thread behind or changes any other
global state does so in a child that ends with its verdict. The server itself never loads learner
code; it stays single-threaded, so forking it is safe.

Two sides in one file:

* the grader's side (:class:`ForkServer`, :class:`ForkedProcess`), imported as
  ``quizprep.grader.learner_side.forkserver``;
* the server, run as a script (``python forkserver.py CONFIG``), which imports nothing of quizprep
  and runs each child through ``worker.py``'s :func:`run`, loaded from its file.

Each spawn request carries the child's pipes (requests, responses, output, exit status) as file
descriptors over a Unix socket. The server reports each child's pid, reaps it when it ends and
writes its exit code to the child's status pipe, which is how the grader learns of a crash.
"""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, BinaryIO

SCRIPT = Path(__file__)
READY = b"ready"
MAX_MESSAGE = 1 << 16


class ForkServerError(RuntimeError):
    """The server could not be started or stopped answering."""


class ForkedProcess:
    """What WorkerSession needs of a worker process (pid, stdout, poll, wait) for a server's child."""

    def __init__(self, pid: int, stdout: BinaryIO, status_fd: int) -> None:
        self.pid = pid
        self.stdout = stdout
        self.status_fd = status_fd
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self._collect(0.0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._collect(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
        return code

    def _collect(self, timeout: float | None) -> int | None:
        if self.returncode is None and select.select([self.status_fd], [], [], timeout)[0]:
            data = os.read(self.status_fd, 64)
            # No status at all: the server is gone, and its children die with it (PR_SET_PDEATHSIG).
            self.returncode = int(data) if data else -signal.SIGKILL
            os.close(self.status_fd)
        return self.returncode

    def __del__(self) -> None:
        if self.returncode is None:
            try:
                os.close(self.status_fd)
            except OSError:
                pass


class ForkServer:
    """One server per grading job; `spawn` is called from one thread at a time."""

    def __init__(self, *, threads: int = 1, startup_seconds: float = 60.0, python: str = sys.executable) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {"socket_fd": theirs.fileno(), "parent": os.getpid(), "threads": threads}
        env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS=str(threads), PYTHONDONTWRITEBYTECODE="1")
        self.process = subprocess.Popen(
            [python, str(SCRIPT), json.dumps(config)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, pass_fds=(theirs.fileno(),), start_new_session=True, env=env,
        )
        theirs.close()
        self.socket = ours
        self.socket.settimeout(startup_seconds)
        try:
            ready = self.socket.recv(MAX_MESSAGE)
        except OSError:
            ready = b""
        if ready != READY:
            self.close()
            raise ForkServerError("the fork server did not start (importing torch failed or took too long)")
        self.socket.settimeout(None)

    def spawn(self, config: dict[str, Any], request_r: int, response_w: int) -> ForkedProcess:
        """A new worker running `config` (worker.py's), reading requests from `request_r` and
        answering on `response_w`; its stdout and stderr come back on the returned process's stdout."""
        output_r, output_w = os.pipe()
        status_r, status_w = os.pipe()
        try:
            socket.send_fds(self.socket, [json.dumps(config).encode()], [request_r, response_w, output_w, status_w])
            reply = self.socket.recv(MAX_MESSAGE)
        except OSError as error:
            os.close(output_r)
            os.close(status_r)
            raise ForkServerError(f"the fork server stopped answering: {error}") from error
        finally:
            os.close(output_w)
            os.close(status_w)
        if not reply:
            os.close(output_r)
            os.close(status_r)
            raise ForkServerError("the fork server ended")
        return ForkedProcess(int(json.loads(reply)["pid"]), os.fdopen(output_r, "rb"), status_r)

    def kill(self) -> None:
        """Kill the server, and with it its children; safe from another thread than the one
        spawning, which then meets the closed socket and closes it (`close`)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self) -> None:
        """Stop the server; children still running die with it."""
        self.socket.close()
        self.kill()
        self.process.wait()


# ---- the server (run as a script) -----------------------------------------------------------


def _serve(config: dict[str, Any]) -> None:
    worker = _load_worker()
    sandbox = worker._load_sibling("sandbox.py")
    sandbox.die_with_parent(int(config["parent"]))
    worker._load_sibling("torch_start.py").import_torch(int(config.get("threads", 1)), before_fork=True)
    server = socket.socket(fileno=int(config["socket_fd"]))
    status: dict[int, int] = {}

    def reap(*_: Any) -> None:
        while True:
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            fd = status.pop(pid, None)
            if fd is not None:
                os.write(fd, str(os.waitstatus_to_exitcode(wait_status)).encode())
                os.close(fd)

    signal.signal(signal.SIGCHLD, reap)
    server.sendall(READY)
    while True:
        message, fds, _, _ = socket.recv_fds(server, MAX_MESSAGE, 4)
        if not message:
            return  # the grader closed its end
        child_config = json.loads(message)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})  # reap only once `status` knows the pid
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(worker, server, child_config, fds)
        status[pid] = fds[3]
        for fd in fds[:3]:
            os.close(fd)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        server.sendall(json.dumps({"pid": pid}).encode())


def _child(worker: Any, server: socket.socket, config: dict[str, Any], fds: list[int]) -> None:
    """Never returns into the server's loop, whatever happens."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        os.setsid()
        request_r, response_w, output_w, status_w = fds
        server.close()
        os.close(status_w)
        os.dup2(output_w, 1)
        os.dup2(output_w, 2)
        os.close(output_w)
        if config.get("private_dir"):
            import tempfile

            os.environ["TMPDIR"] = config["private_dir"]
            tempfile.tempdir = None  # the server may have looked up /tmp already
        config.update(request_fd=request_r, response_fd=response_w, parent=os.getppid())
        worker.run(config)
        code = 0
    except BaseException:  # noqa: BLE001 - printed for the grader's output capture
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


def _load_worker() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_quizprep_worker", SCRIPT.with_name("worker.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    del sys.path[0]  # the grader's own directory: the children's learner code must not import it
    _serve(json.loads(sys.argv[1]))
