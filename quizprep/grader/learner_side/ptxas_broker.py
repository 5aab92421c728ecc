"""The two programs a learner's process may have run, on a GPU: Triton's ptxas and the C
compiler that builds Triton's kernel launcher.

Triton compiles a kernel in-process down to PTX, then runs NVIDIA's ``ptxas`` to assemble it, and
(Triton before 3.7) builds a small C launcher per kernel signature with the system's C compiler;
the worker's seccomp filter denies ``execve``. The opening is a broker: before the filter and
Landlock go on, the worker forks a process that runs only the ``ptxas`` whose paths are fixed at
that moment, only with arguments from Triton's own set (:func:`refusal`), and builds only
launcher sources of the private directory that include nothing but the headers Triton's
launcher includes (:func:`source_refusal`), with Triton's own command and directories. The
learner's process keeps its filter; what it can ask for is "assemble this .ptx file" and
"build this launcher", both in its private directory. Triton's ``make_cubin`` stays as it is:
its ``subprocess.run`` is routed to the broker, and Triton's build hook (``knobs.build.impl``)
sends launcher builds there.

Loaded by the worker from its file (never as ``quizprep.grader.learner_side.ptxas_broker``); imports nothing
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
# What Triton's launcher source includes; any other header could pull a file of the machine into
# the compiler's output, which the learner's process then reads.
LAUNCHER_HEADERS = frozenset({"cuda.h", "Python.h", "dlfcn.h", "stdbool.h", "stdlib.h", "stdint.h", "stdio.h",
                              "string.h", "assert.h", "math.h"})
INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"][ \t]*$", re.MULTILINE)
DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*include\b", re.MULTILINE)
# Ways for a C file to read another file or reach the assembler: refused wherever they appear.
SMUGGLING = re.compile(r"incbin|embed|__has_include|\basm\b|__asm|_Pragma|#[ \t]*pragma|\?\?=|%:|\\[ \t]*$",
                       re.MULTILINE)
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}$")


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


def source_refusal(text: str) -> str:
    """Why `text` is not a launcher source the broker builds, or "" when it is."""
    if found := SMUGGLING.search(text):
        return f"the launcher source may not use {found.group(0)!r}"
    headers = INCLUDE.findall(text)
    if len(headers) != len(DIRECTIVE.findall(text)):
        return "the launcher source has an #include the broker cannot read"
    if unexpected := sorted(set(headers) - LAUNCHER_HEADERS):
        return f"the launcher source includes {unexpected[0]!r}, not a header Triton's launcher uses"
    return ""


def build_refusal(request: dict[str, Any], toolchain: dict[str, list[str]], private_dir: str) -> str:
    """Why `request` is not a launcher build Triton would ask for, or "" when it is."""
    root = os.path.realpath(private_dir) + os.sep
    name, src, srcdir = (str(request.get(key, "")) for key in ("name", "src", "srcdir"))
    if not NAME.match(name):
        return f"{name!r} is not a module name"
    inside = os.path.realpath(src).startswith(root) and os.path.realpath(srcdir).startswith(root)
    if not (src.endswith(".c") and inside):
        return "the launcher's source and folder must be in the private directory"
    if os.path.dirname(os.path.realpath(src)) != os.path.realpath(srcdir):
        return "the launcher's source must be in its build folder"
    for key, fixed in toolchain.items():
        if list(request.get(key, [])) != fixed:
            return f"{key} differ from Triton's"
    try:
        with open(src, errors="replace") as source:
            return source_refusal(source.read())
    except OSError as error:
        return f"the launcher's source cannot be read: {error.strerror}"


def start(programs: tuple[str, ...], private_dir: str, toolchain: dict[str, list[str]] | None = None) -> socket.socket:
    """Fork the broker; the caller keeps the returned end of its socket. With `toolchain` (Triton's
    library_dirs, include_dirs and libraries) it also builds launchers."""
    parent = os.getpid()
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the broker: serve until the worker closes its end, never return into the worker
        ours.close()
        try:
            from ctypes import CDLL, util

            CDLL(util.find_library("c")).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
            if os.getppid() == parent:
                _silence_output()
                _serve(theirs, programs, private_dir, toolchain)
        finally:
            os._exit(0)
    theirs.close()
    return ours


def _silence_output() -> None:
    """The compiler's messages go back only in replies, never straight to the grader's log."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)


def _serve(channel: socket.socket, programs: tuple[str, ...], private_dir: str,
           toolchain: dict[str, list[str]] | None) -> None:
    while (request := _receive(channel)) is not None:
        if "build" in request:
            _send(channel, _build(request["build"], toolchain, private_dir))
            continue
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


def _build(request: dict[str, Any], toolchain: dict[str, list[str]] | None, private_dir: str) -> dict[str, Any]:
    if toolchain is None:
        return {"refused": "this broker builds no launchers"}
    if why := build_refusal(request, toolchain, private_dir):
        return {"refused": why}
    from triton.runtime import build  # the broker's Triton has no build hook set: its own command runs

    try:
        so = build._build(request["name"], request["src"], request["srcdir"], toolchain["library_dirs"],
                          toolchain["include_dirs"], toolchain["libraries"], [])
    except subprocess.CalledProcessError as error:
        return {"returncode": error.returncode or 1}
    except (OSError, RuntimeError) as error:
        return {"refused": f"the C compiler could not run: {error}"}
    return {"returncode": 0, "so": so}


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


def route_builds(channel: socket.socket) -> Any:
    """Triton's build hook: each launcher build is the broker's; returns the hook."""

    def build(name: str, src: str, srcdir: str, library_dirs: list[str], include_dirs: list[str],
              libraries: list[str], *_: Any) -> str:
        _send(channel, {"build": {"name": name, "src": src, "srcdir": srcdir, "library_dirs": list(library_dirs),
                                  "include_dirs": list(include_dirs), "libraries": list(libraries)}})
        reply = _receive(channel) or {"refused": "the ptxas broker has gone"}
        if "refused" in reply:
            raise PermissionError(reply["refused"])
        if reply["returncode"]:
            raise subprocess.CalledProcessError(reply["returncode"], ["cc", src])
        return reply["so"]

    return build


def open_for_triton(private_dir: str) -> str:
    """On a CUDA machine with Triton: do Triton's other start-up programs now (ldconfig for
    libcuda, ptxas --version), start the broker and route Triton's ptxas runs and launcher builds
    to it. Returns how they run, for the report's sandbox entry, or "" where nothing was opened: no CUDA (kernels
    run interpreted), no Triton, or no private directory to confine the broker's writes to."""
    try:
        import torch

        if not private_dir or not torch.cuda.is_available():
            return ""
        import triton
        from triton.backends.nvidia import compiler, driver
    except ImportError:
        return ""
    # make_cubin writes its .ptx and .o here, where the broker accepts them (a fork server may set no TMPDIR)
    tempfile.tempdir = private_dir
    arch = triton.runtime.driver.active.get_current_target().arch
    compiler.get_ptxas_version(arch)  # cached: the one other run of ptxas, done before the filter
    programs = tuple(sorted({compiler.get_ptxas(80).path, compiler.get_ptxas(arch).path}))
    toolchain = {"library_dirs": list(driver.library_dirs()), "include_dirs": list(driver.include_dirs),
                 "libraries": list(driver.libraries)}
    channel = start(programs, private_dir, toolchain)
    compiler.subprocess = BrokeredSubprocess(channel)
    triton.knobs.build.impl = route_builds(channel)
    return f"through a broker that runs only {', '.join(programs)} and builds Triton's launchers"
