"""The one program a learner's process may have run: Triton's ptxas, on a GPU.

Triton compiles a kernel in-process down to PTX, then runs NVIDIA's ``ptxas`` to assemble it;
the worker's seccomp filter denies ``execve``. The opening is a broker: before the filter and
Landlock go on, the worker forks a process that runs exactly one program, the ``ptxas`` whose paths are fixed at that moment, and only with
arguments from Triton's own set (:func:`refusal`): the learner's process keeps its filter, and
what it can ask for is "assemble this .ptx file of my private directory". Triton's own
``make_cubin`` stays as it is; its ``subprocess.run`` is routed to the broker.

Loaded by the worker from its file (never as ``quizprep.grader.ptxas_broker``); imports nothing
of quizprep.
"""
from __future__ import annotations

import json
import os
import re
import socket
import struct
import subprocess
import tempfile
from typing import Any

FLAGS = frozenset({"-lineinfo", "-suppress-debug-info", "-g", "--fmad=false", "-v", "--opt-level", "0", "1",
                   "--regAllocOptLevel=2", "-o"})
GPU_NAME = re.compile(r"--gpu-name=sm_\d{2,3}[af]?$")
HEADER = struct.Struct("!I")


def refusal(argv: list[str], programs: tuple[str, ...], private_dir: str) -> str:
    """Why `argv` is not a ptxas run Triton would make, or "" when it is."""
    if not argv or argv[0] not in programs:
        return f"only {', '.join(programs)} may be run, not {argv[:1]}"
    root = os.path.realpath(private_dir) + os.sep
    for arg in argv[1:]:
        if arg in FLAGS or GPU_NAME.match(arg):
            continue
        if arg.endswith((".ptx", ".ptx.o")) and os.path.realpath(arg).startswith(root):
            continue
        return f"argument {arg!r} is not one Triton passes to ptxas"
    return ""


def start(programs: tuple[str, ...], private_dir: str) -> socket.socket:
    """Fork the broker; the caller keeps the returned end of its socket."""
    parent = os.getpid()
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the broker: serve until the worker closes its end, never return into the worker
        ours.close()
        try:
            from ctypes import CDLL, util

            CDLL(util.find_library("c")).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
            if os.getppid() == parent:
                _serve(theirs, programs, private_dir)
        finally:
            os._exit(0)
    theirs.close()
    return ours


def _serve(channel: socket.socket, programs: tuple[str, ...], private_dir: str) -> None:
    while (request := _receive(channel)) is not None:
        argv = [str(arg) for arg in request.get("argv", [])]
        why = refusal(argv, programs, private_dir)
        if why:
            _send(channel, {"refused": why})
            continue
        try:
            done = subprocess.run(argv, capture_output=True, timeout=300, close_fds=True)
            reply = {"returncode": done.returncode, "stdout": done.stdout.decode(errors="replace"),
                     "stderr": done.stderr.decode(errors="replace")}
        except (OSError, subprocess.TimeoutExpired) as error:
            reply = {"refused": f"ptxas could not run: {error}"}
        _send(channel, reply)


def _send(channel: socket.socket, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    channel.sendall(HEADER.pack(len(data)) + data)


def _receive(channel: socket.socket) -> dict[str, Any] | None:
    header = _exactly(channel, HEADER.size)
    if header is None:
        return None
    data = _exactly(channel, HEADER.unpack(header)[0])
    return None if data is None else json.loads(data)


def _exactly(channel: socket.socket, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = channel.recv(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class BrokeredSubprocess:
    """Stands in for the `subprocess` module inside Triton's NVIDIA compiler: `run` goes to the
    broker; everything else is the real module's."""

    def __init__(self, channel: socket.socket) -> None:
        self.channel = channel

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)

    def run(self, argv: list[str], check: bool = False, stderr: Any = None, **_: Any) -> subprocess.CompletedProcess:
        _send(self.channel, {"argv": [str(arg) for arg in argv]})
        reply = _receive(self.channel) or {"refused": "the ptxas broker has gone"}
        if "refused" in reply:
            raise PermissionError(reply["refused"])
        if stderr is not None and hasattr(stderr, "name"):
            with open(stderr.name, "w") as log:
                log.write(reply["stderr"])
        if check and reply["returncode"]:
            raise subprocess.CalledProcessError(reply["returncode"], argv, reply["stdout"], reply["stderr"])
        return subprocess.CompletedProcess(argv, reply["returncode"], reply["stdout"], reply["stderr"])


def open_for_triton(private_dir: str) -> str:
    """On a CUDA machine with Triton: do Triton's other start-up programs now (ldconfig for
    libcuda, ptxas --version), start the broker and route Triton's ptxas runs to it. Returns how
    ptxas runs, for the report's sandbox entry, or "" where nothing was opened: no CUDA (kernels
    run interpreted), no Triton, or no private directory to confine the broker's writes to."""
    try:
        import torch

        if not private_dir or not torch.cuda.is_available():
            return ""
        import triton
        from triton.backends.nvidia import compiler
    except ImportError:
        return ""
    # make_cubin writes its .ptx and .o here, where the broker accepts them (a fork server may set no TMPDIR)
    tempfile.tempdir = private_dir
    arch = triton.runtime.driver.active.get_current_target().arch
    compiler.get_ptxas_version(arch)  # cached: the one other run of ptxas, done before the filter
    programs = tuple(sorted({compiler.get_ptxas(80).path, compiler.get_ptxas(arch).path}))
    compiler.subprocess = BrokeredSubprocess(start(programs, private_dir))
    return f"through a broker that runs only {', '.join(programs)}"
