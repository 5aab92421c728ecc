"""The learner's process: loads their file and runs the calls the grader asks for.

Started by :mod:`quizprep.grader.worker_session` as a script (``python worker.py CONFIG``), never
imported by learner code. It receives inputs and sends back outputs over two inherited pipe
file descriptors; it never sees a reference result. Before the learner's file is imported it:

* drops the grader's directory from ``sys.path`` and blocks importing ``quizprep`` (a meta-path
  finder), so the reference engine cannot be borrowed;
* confines its files with Landlock (``sandbox.confine``): it reads its own file only as a copy in
  its private directory, Python and PyTorch, and nothing of quizprep's package by any path;
* installs the exercise's guards (``guards.py``): the forbidden functions raise with the
  learner's line recorded, and the kernels behind them are replaced in PyTorch's dispatcher, so no
  other route (``torch.ops``, TorchScript, a popped mode) reaches them;
* sets a memory limit (``RLIMIT_AS``, measured above what importing torch already reserved),
  disables core dumps and arms ``faulthandler`` so a segfault or a hang leaves a traceback.
"""
from __future__ import annotations

import contextlib
import faulthandler
import importlib.abc
import importlib.util
import json
import os
import resource
import signal
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

LEARNER_MODULE = "quizprep_submission"
HOST_COPIES_KEPT = 4  # the first few tell where; one is enough to fail the device check


class Worker:
    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.learner_path = str(Path(config["path"]).resolve())
        self.copy_path = str(config["copy"])  # the only copy of the learner's file it can read
        self.request_fd = int(config["request_fd"])
        self.response_fd = int(config["response_fd"])
        self.channel = _load_sibling("protocol.py")
        self.sandbox = _load_sibling("sandbox.py")
        self.violations: list[dict[str, Any]] = []
        self.host_copies: list[dict[str, Any]] = []  # tensors read into NumPy during a call
        self.modules: dict[int, Any] = {}
        self.learner: ModuleType | None = None
        self.guard_module = _load_sibling("guards.py")
        self.values = _load_sibling("call_values.py")
        self.errors = _load_sibling("errors.py")
        self.memaudit = _load_sibling("memaudit.py")
        self.memaudit.watch_lines_of(self.learner_path)
        self.launches_module = _load_sibling("launches.py")
        self.launches = self.launches_module.LaunchCounter()
        self.op_recorder = _load_sibling("op_recorder.py")
        self.guards: Any = None
        self.trapped_libraries: list[str] = []
        self.gpu_in_use = False

    # ---- set-up -------------------------------------------------------------------------
    def prepare(self) -> dict[str, Any]:
        """Limits, guards and the kernel's protections; returns which protections hold here."""
        protections = {"dies_with_grader": self.sandbox.die_with_parent(int(self.config["parent"]))}
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        self.sandbox.limit_cpu(float(self.config["cpu_seconds"]))
        faulthandler.enable(file=sys.stderr, all_threads=True)
        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
        start = _load_sibling("torch_start.py")
        start.import_torch(int(self.config.get("threads", 1)), warm_up=bool(self.config.get("warm_up", True)))
        start.configure_triton(self.config.get("private_dir"))
        start.run_compiled_code_eagerly()
        if self.config.get("forbidden") is None:  # launched before the grader knew the exercise
            self.config.update(self.channel.read_message(self.request_fd))
        self._limit_memory()
        if self.config.get("max_tasks"):  # jailed without a cgroup: counted in its own user namespace
            resource.setrlimit(resource.RLIMIT_NPROC, (int(self.config["max_tasks"]),) * 2)
        self.sandbox.limit_open_files()
        protections.update(self._install_guards())
        self._wrap_os_exit()
        sys.meta_path.insert(0, QuizprepBlocker(self))
        protections["ptrace_capability_dropped"] = self.sandbox.drop_ptrace_capability()
        # Dropping a capability changes the credentials, which clears the death signal: armed again
        # here, before the syscall filter refuses that prctl.
        protections["dies_with_grader"] = self.sandbox.die_with_parent(int(self.config["parent"]))
        # Before the filter and Landlock: Triton's start-up runs programs (ldconfig, ptxas --version),
        # and the broker keeps the one right to exec, checking every request it is sent.
        ptxas = _load_sibling("ptxas_broker.py").open_for_triton(self.config.get("private_dir") or "")
        if ptxas:
            protections["ptxas"] = ptxas
        # Before Landlock: finding libseccomp runs ldconfig.
        protections["syscall_filter"] = self._filter_syscalls(self._no_new_code(protections))
        protections.update(self._confine_files())
        return protections

    def _limit_memory(self) -> None:
        limit = self.config.get("memory_limit_bytes")
        if not limit:
            return
        with open("/proc/self/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
        reserved = int(fields["VmSize"].split()[0]) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (reserved + int(limit), reserved + int(limit)))

    def _confine_files(self) -> dict[str, Any]:
        """Reads only of its own file (a copy in the private directory), Python, PyTorch and the
        GPU's devices; writes only below the private directory the grader made (and removes), each
        file capped in size. Every grader module it needs is loaded before."""
        if self.config.get("file_bytes"):
            self.sandbox.limit_file_size(int(self.config["file_bytes"]))
        private = self.config.get("private_dir")
        if not private:
            return {"files": "anywhere: no private directory was given"}
        # The trapped libraries' files too: their bytes would put the kernels' code back.
        hidden = _quizprep_folders() + list(self.trapped_libraries)
        access = self.sandbox.learner_access(private, hidden=hidden)
        refused = self.sandbox.confine(access)
        return access.summary() if not refused else {"files": f"anywhere: {refused}"}

    def _install_guards(self) -> dict[str, Any]:
        """The guards, then the forbidden kernels' machine code replaced by traps: the guards
        live in Python and the dispatcher, which native code (ctypes into libtorch's C shims, a
        guard reset found in memory) reaches around; the kernels' code is where all routes end."""
        self.guards = self.guard_module.Guards(self.config.get("forbidden", ()), self.record_violation)
        self.guards.note_host_copy = self.record_host_copy
        self.guards.install()
        traps = _load_sibling("native_traps.py").trap_forbidden_code(self.guards.parts)
        self.trapped_libraries = traps.pop("trapped_libraries", [])
        return traps

    def _filter_syscalls(self, no_new_code: bool) -> str:
        """Two stacked filters: the refusals that read arguments (sandbox.py, and no page of a
        trapped library unmapped, moved or remapped over), then the allowlist."""
        policy, spans = _load_sibling("syscall_policy.py"), map(_load_sibling("native_traps.py").mapped_span,
                                                                 self.trapped_libraries)
        refused = self.sandbox.install_syscall_filter(no_new_code=no_new_code,
                                                      extra=policy.protect_ranges(filter(None, spans)))
        if not refused:
            rules, default = policy.allowlist(gpu=bool(self.sandbox.gpu_device_nodes()))
            refused = self.sandbox.load_filter(default, [(name, action, []) for name, action, _ in rules])
        return "installed" if not refused else f"not installed: {refused}"

    def _no_new_code(self, protections: dict[str, Any]) -> bool:
        """Refuse memory turning executable where traps hold code that mprotect would restore,
        (no traps are set on a GPU machine); oneDNN JIT-compiles with mprotect, so PyTorch's
        mkldnn is turned off."""
        if not self.trapped_libraries:
            return False
        import torch

        # the stubs type this module attribute as its ContextProp descriptor; assigning is the API
        torch.backends.mkldnn.enabled = False  # type: ignore[assignment]
        protections["new_code"] = "refused (mprotect to executable)"
        return True

    def _wrap_os_exit(self) -> None:
        real_exit = os._exit
        worker = self

        def exit_now(status: int) -> None:
            try:
                frames = worker.learner_frames(traceback.extract_stack()[:-1])
                worker.send({"event": "os_exit", "status": status, "frames": frames})
            finally:
                real_exit(status)

        os._exit = exit_now  # type: ignore[assignment]

    def record_violation(self, label: str) -> None:
        frames = self.learner_frames(traceback.extract_stack()[:-2])
        self.violations.append({"call": label, "frames": frames})

    # ---- the learner's file -------------------------------------------------------------
    def load_learner(self) -> dict[str, Any]:
        """Runs the learner's file from its copy, under its own name (tracebacks, __file__); the
        folder it came from is not on sys.path, so a classmate's file there cannot be imported."""
        self.learner, self.modules = None, {}
        module = ModuleType(LEARNER_MODULE)
        module.__file__ = self.learner_path
        sys.modules[LEARNER_MODULE] = module
        started = time.perf_counter()
        try:
            source = Path(self.copy_path).read_bytes()
            self.errors.remember_source(self.learner_path, source)
            exec(compile(source, self.learner_path, "exec", dont_inherit=True), module.__dict__)
        except BaseException as error:  # noqa: BLE001 - every failure is the learner's to see
            return {"ready": False, "error": self.describe(error), "forbidden": self.take_violations()}
        self.learner = module
        names = sorted(n for n in vars(module) if not n.startswith("_"))
        return {
            "ready": True,
            "names": names,
            "seconds": time.perf_counter() - started,
            "forbidden": self.take_violations(),
        }

    def record_host_copy(self, label: str) -> None:
        if len(self.host_copies) < HOST_COPIES_KEPT:
            self.host_copies.append({"call": label, "frames": self.learner_frames(traceback.extract_stack()[:-2])})

    def take_violations(self) -> list[dict[str, Any]]:
        found, self.violations = self.violations, []
        return found

    def learner_frames(self, frames: Any) -> list[dict[str, Any]]:
        return self.errors.learner_frames(frames, self.learner_path)

    def describe(self, error: BaseException) -> dict[str, Any]:
        return self.errors.describe(error, self.learner_path, forbidden=self.guard_module.ForbiddenCall)

    # ---- serving ------------------------------------------------------------------------
    def send(self, payload: Any) -> None:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass  # learner code may have closed or replaced them
        try:
            os.write(1, self.channel.OUTPUT_SYNC)
        except OSError:
            pass  # the grader then stops waiting for it after a moment
        limit = int(self.config.get("reply_bytes", self.channel.MAX_MESSAGE_BYTES))
        self.channel.write_message(self.response_fd, payload, limit)

    def serve(self) -> None:
        while True:
            try:
                request = self.channel.read_message(self.request_fd)
            except EOFError:
                return
            started = time.perf_counter()
            try:
                response = self.handle(request)
            except BaseException as error:  # noqa: BLE001
                response = {"ok": False, "error": self.describe(error)}
            response["forbidden"] = self.take_violations()
            if self.host_copies:
                response["host_copies"], self.host_copies = self.host_copies, []
            response["seconds"] = time.perf_counter() - started
            try:
                self.send(response)
            except Exception as error:  # noqa: BLE001 - encoding failed before a byte was written
                self.send({"ok": False, "error": {"kind": "exception", "type": type(error).__name__,
                                                  "message": f"could not send the result back: {error}",
                                                  "frames": []}})

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        if str(request.get("device", "")).startswith("cuda"):
            self.use_gpu()
        if op == "ping":
            return {"ok": True, "value": None}
        if op == "load":  # another file of the same exercise (WorkerSession.switch restarts for others)
            self.sandbox.limit_cpu(float(self.config["cpu_seconds"]))
            self.learner_path = str(Path(request["path"]).resolve())
            self.memaudit.watch_lines_of(self.learner_path)
            self.copy_path = str(request["copy"])
            return {"ok": True, "value": self.load_learner()}
        if op == "new_module":
            return self.new_module(request)
        if op == "set_state":
            return self.set_state(self.modules[int(request["handle"])], request)
        if op == "call":
            target = self.lookup(request["target"])
            return self.call(target, request)
        if op == "call_module":
            module = self.modules[int(request["handle"])]
            return self.call(module, request, parameters=dict(module.named_parameters(remove_duplicate=False)))
        raise ValueError(f"unknown op {op!r}")

    def use_gpu(self) -> None:
        """CUDA starts here, on the first request for it, never in a fork server's parent; this
        process then allocates at most its share of the card, so parallel graders on one GPU all fit."""
        if self.gpu_in_use:
            return
        import torch

        torch.cuda.set_per_process_memory_fraction(float(self.config.get("gpu_memory_fraction", 0.9)))
        self.gpu_in_use = True

    def lookup(self, name: str) -> Any:
        target = getattr(self.learner, name, None)
        if target is None:
            raise LookupError(f"your file does not define {name!r}")
        return target

    def new_module(self, request: dict[str, Any]) -> dict[str, Any]:
        import torch

        cls = self.lookup(request["target"])
        torch.manual_seed(int(request.get("seed", 0)))
        instance = cls(*request.get("args", []), **request.get("kwargs", {}))
        if not isinstance(instance, torch.nn.Module):
            return {"ok": False, "error": {"kind": "wrong_type", "type": "TypeError", "frames": [],
                                           "message": f"{request['target']}(...) is not an nn.Module"}}
        instance.eval()  # the contract: graded as at inference, so dropout layers are identities
        if any(torch.nn.parameter.is_lazy(p) for p in instance.parameters()):
            with torch.no_grad():  # nn.LazyLinear learns its widths from a first input, as torch asks
                instance(*request.get("example", []))
        handle = len(self.modules)
        self.modules[handle] = instance
        kinds = {name: f"{type(sub).__module__}.{type(sub).__qualname__}" for name, sub in instance.named_children()}
        parameters = {name: p.detach().clone() for name, p in instance.named_parameters(remove_duplicate=False)}
        return {"ok": True, "value": {"handle": handle, "children": kinds, "parameters": parameters}}

    def set_state(self, module: Any, request: dict[str, Any]) -> dict[str, Any]:
        import torch

        dtype = request.get("dtype")
        device = request.get("device", "cpu")
        module.to(device=device, dtype=getattr(torch, dtype) if dtype else None)
        parameters = dict(module.named_parameters(remove_duplicate=False))
        with torch.no_grad():
            for name, value in request.get("state", {}).items():
                parameters[name].copy_(value)
        return {"ok": True, "value": None}

    def call(self, target: Callable[..., Any], request: dict[str, Any],
             parameters: dict[str, Any] | None = None) -> dict[str, Any]:
        import torch

        prepare = self.values.Preparer(request.get("device", "cpu"), request.get("noncontiguous") or False,
                                       bool(request.get("requires_grad")))
        layouts = request.get("layouts") or []  # one per positional input, where they differ
        args = [prepare.laid_out(layouts[i])(a) if i < len(layouts) else prepare(a)
                for i, a in enumerate(request.get("args", []))]
        kwargs = {k: prepare(v) for k, v in request.get("kwargs", {}).items()}
        grad_output = request.get("grad_output")
        context = torch.enable_grad() if grad_output is not None else torch.no_grad()
        numpy_track = bool(request.get("numpy"))
        call_args = [self.values.to_numpy(a) for a in args] if numpy_track else args
        call_kwargs = {k: self.values.to_numpy(v) for k, v in kwargs.items()} if numpy_track else kwargs
        memory = None
        self.launches_module.mend_interpreter()
        if request.get("count_launches"):
            self.launches.start()
        recorder = self.op_recorder.recorder_for(request, self.learner_path)
        self.guards.numpy_only = numpy_track
        with context, self.guards.mode, recorder or contextlib.nullcontext():
            if request.get("memory_audit"):
                value, memory = self.memaudit.audit(target, *call_args, **call_kwargs)
            else:
                value = target(*call_args, **call_kwargs)
        response: dict[str, Any] = {"ok": True, "value": self.values.from_numpy(value) if numpy_track else value}
        if request.get("count_launches"):
            response["launches"] = self.launches.count
            response["unwritten"], response["grid"] = self.launches.unwritten(value), list(self.launches.grid)
            response["loaded"] = self.launches.loaded if self.launches.stored else None  # None: compiled
        if recorder is not None:
            response["ops"] = recorder.entries()
        if memory is not None:
            response["memory"] = self.values.memory_summary(memory)
        if grad_output is not None:
            response["grads"] = self.values.gradients(value, request, args, kwargs, parameters or {})
        if request.get("return_inputs"):
            response["inputs_after"] = {"args": args, "kwargs": kwargs}
        return response


def _load_sibling(name: str) -> ModuleType:
    """A grader module loaded by path (learner code cannot import quizprep), once per process."""
    key = f"_quizprep_{name.removesuffix('.py')}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, Path(__file__).with_name(name))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module  # dataclasses look their module up while it executes
        spec.loader.exec_module(module)
    return sys.modules[key]


class QuizprepBlocker(importlib.abc.MetaPathFinder):
    """Refuses `import quizprep...` from learner code and records the attempt."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname == "quizprep" or fullname.startswith("quizprep."):
            self.worker.record_violation(f"import {fullname}")
            raise ImportError(f"{fullname} cannot be imported from an exercise: it contains the grader's reference")
        return None


def _quizprep_folders() -> list[str]:
    """quizprep's package, and the checkout holding it when run from one (its tests hold solutions)."""
    package = Path(__file__).resolve().parents[2]
    holder = package.parent
    return [str(package)] + ([] if holder.name in ("site-packages", "dist-packages") else [str(holder)])


def run(config: dict[str, Any]) -> None:
    """Everything a worker does, from its protections to serving the grader's requests."""
    # Before its siblings import torch (seconds): a grader killed meanwhile leaves no worker.
    _load_sibling("sandbox.py").die_with_parent(int(config["parent"]))
    worker = Worker(config)
    protections = worker.prepare()
    worker.send({"prepared": True, "sandbox": protections})  # from here on the learner's time limits apply
    worker.send(worker.load_learner())
    worker.serve()


def main() -> None:
    del sys.path[0]  # the grader's own directory: learner code must not import its modules
    run(json.loads(sys.argv[1]))


if __name__ == "__main__":
    main()
