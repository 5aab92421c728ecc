"""What a check sees: a handle on the learner's process, the seed and the device."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch import Tensor

from quizprep.grader.calls import CallLog
from quizprep.grader.learner_side import protocol
from quizprep.grader.spec import CheckFailure, FailureKind
from quizprep.grader.failures import LearnerFailure
from quizprep.grader.worker_session import WorkerSession


@dataclass
class Reply:
    value: Any
    grads: dict[str, Tensor | None] = field(default_factory=dict)
    grad_error: str = ""
    inputs_after: dict[str, Any] = field(default_factory=dict)
    launches: int | None = None  # Triton kernels launched by the call, when asked (count_launches)
    # interpreted launches: per returned tensor, its elements no tl.store wrote (None: not checked)
    unwritten: list[Tensor | None] | None = None
    grid: tuple[int, ...] = ()  # the last interpreted program's grid
    # interpreted launches: how many elements their tl.loads read in all (None: not checked)
    loaded: int | None = None


@dataclass
class LearnerModule:
    handle: int
    children: dict[str, str]
    parameters: dict[str, Tensor]
    target: str = ""  # its class's name
    built: str = ""  # its constructor call, as code (calls.CallLog)


EveryCall = Callable[["CheckContext", dict[str, Any], dict[str, Any]], None]


class CheckContext:
    """Passed to every check. `call` and `new_module` run in the learner's process."""

    def __init__(self, session: WorkerSession, *, seed: int = 0, device: str = "cpu", perf_full: bool = False,
                 calls: CallLog | None = None, every_call: EveryCall | None = None) -> None:
        self.session = session
        # the exercise's judge of every call, audited (ExerciseSpec.every_call); a reply without
        # the audit fails before it is judged
        self.every_call = every_call
        self.seed = seed
        self.device = device
        self.perf_full = perf_full  # the perf phase times every size of its plan
        # what the running check called, for results.json's test_code
        self.call_log = calls if calls is not None else CallLog()
        self.recorded_ops: list[dict[str, Any]] = []  # from calls made with record_ops (op_lines.py)

    def reseeded(self, salt: int) -> CheckContext:
        """The same learner with another seed for the modules it builds: a second call then draws
        other random numbers, as a second forward of one module would (dropout shows up)."""
        return CheckContext(self.session, seed=self.seed + salt, device=self.device, calls=self.call_log,
                            every_call=self.every_call)

    def module_seed(self) -> int:
        """The seed the learner's process initialises modules with: a one-way function of the
        grade's seed, so the learner's code cannot recover the seed and predict the inputs."""
        digest = hashlib.sha256(f"quizprep-module:{self.seed}".encode()).digest()
        return int.from_bytes(digest[:4], "big")

    def generator(self, salt: int = 0) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed * 1_000_003 + salt)

    def draw(self, salt: int, low: int, high: int) -> int:
        """An integer in [low, high) of this grade's own (a check size or position): code that answers
        fixed check inputs from a table, or takes its right path only at them, meets one it did not
        expect (sixth and seventh red teams)."""
        return int(torch.randint(low, high, (1,), generator=self.generator(salt)))

    def call(self, target: str, *args: Any, options: dict[str, Any] | None = None, **kwargs: Any) -> Reply:
        """Call the learner's function `target`; `options` may set noncontiguous, grad_output
        (with grad_path, the index path to the differentiated output) and return_inputs."""
        self.call_log.call(target, args, kwargs)
        return self._send({"op": "call", "target": target, "args": list(args), "kwargs": kwargs}, options)

    def call_module(self, module: LearnerModule, *args: Any, options: dict[str, Any] | None = None,
                    **kwargs: Any) -> Reply:
        self.call_log.call(module.target, args, kwargs, module=module.built)
        return self._send({"op": "call_module", "handle": module.handle, "args": list(args), "kwargs": kwargs},
                          options)

    def new_module(self, target: str, *args: Any, state: dict[str, Tensor] | None = None,
                   dtype: torch.dtype | None = None, example: tuple[Tensor, ...] = ()) -> LearnerModule:
        """Construct the learner's class; with `state`, overwrite those parameters (and cast to dtype).
        A module with lazy parameters (nn.LazyLinear) is called once on `example` to make them."""
        built = self.call_log.construct(target, args)
        reply = self.session.request({"op": "new_module", "target": target, "args": list(args),
                                      "seed": self.module_seed(), "example": list(example)})
        try:
            module = LearnerModule(*protocol.checked_module(reply["value"]), target=target, built=built)
        except protocol.ProtocolError as error:
            self.session.close()
            raise LearnerFailure(FailureKind.PROTOCOL, f"the result could not be read back ({error})") from None
        if state is not None or dtype is not None:
            self.session.request({
                "op": "set_state", "handle": module.handle, "state": state or {}, "device": self.device,
                "dtype": str(dtype).removeprefix("torch.") if dtype is not None else None,
            })
        return module

    def _send(self, request: dict[str, Any], options: dict[str, Any] | None) -> Reply:
        request.update(options or {})
        request["device"] = self.device
        # a replay recording ops comes after the verdict, only to find the learner's line
        judged = request["op"] == "call" and self.device != "meta" and not request.get("record_ops")
        judge = self.every_call if judged else None
        if judge is not None:
            request["memory_audit"] = True
        response = self.session.request(request)
        if judge is not None:
            if "memory" not in response:
                raise CheckFailure("the call's reply came back without the grader's memory audit",
                                   hint="Leave torch's dispatch modes and the grader's process alone.")
            judge(self, request, response)
        self.recorded_ops += response.get("ops") or []
        grads = response.get("grads") or {}
        return Reply(response.get("value"), grads.get("values", {}), grads.get("error", ""),
                     response.get("inputs_after", {}), response.get("launches"), response.get("unwritten"),
                     tuple(response.get("grid") or ()), response.get("loaded"))
