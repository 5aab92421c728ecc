"""What a check sees: a handle on the learner's process, the seed and the device."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from quizprep.grader.worker_session import WorkerSession


@dataclass
class Reply:
    value: Any
    grads: dict[str, Tensor | None] = field(default_factory=dict)
    grad_error: str = ""
    inputs_after: dict[str, Any] = field(default_factory=dict)


@dataclass
class LearnerModule:
    handle: int
    children: dict[str, str]
    parameters: dict[str, Tensor]


class CheckContext:
    """Passed to every check. `call` and `new_module` run in the learner's process."""

    def __init__(self, session: WorkerSession, *, seed: int = 0, device: str = "cpu", perf_full: bool = False) -> None:
        self.session = session
        self.seed = seed
        self.device = device
        self.perf_full = perf_full  # the perf phase times every size of its plan

    def reseeded(self, salt: int) -> CheckContext:
        """The same learner with another seed for the modules it builds: a second call then draws
        other random numbers, as a second forward of one module would (dropout shows up)."""
        return CheckContext(self.session, seed=self.seed + salt, device=self.device)

    def module_seed(self) -> int:
        """The seed the learner's process initialises modules with: a one-way function of the
        grade's seed, so the learner's code cannot recover the seed and predict the inputs."""
        digest = hashlib.sha256(f"quizprep-module:{self.seed}".encode()).digest()
        return int.from_bytes(digest[:4], "big")

    def generator(self, salt: int = 0) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed * 1_000_003 + salt)

    def call(self, target: str, *args: Any, options: dict[str, Any] | None = None, **kwargs: Any) -> Reply:
        """Call the learner's function `target`; `options` may set noncontiguous, grad_output
        (with grad_path, the index path to the differentiated output) and return_inputs."""
        return self._send({"op": "call", "target": target, "args": list(args), "kwargs": kwargs}, options)

    def call_module(self, module: LearnerModule, *args: Any, options: dict[str, Any] | None = None,
                    **kwargs: Any) -> Reply:
        return self._send({"op": "call_module", "handle": module.handle, "args": list(args), "kwargs": kwargs},
                          options)

    def new_module(self, target: str, *args: Any, state: dict[str, Tensor] | None = None,
                   dtype: torch.dtype | None = None) -> LearnerModule:
        """Construct the learner's class; with `state`, overwrite those parameters (and cast to dtype)."""
        reply = self.session.request({"op": "new_module", "target": target, "args": list(args),
                                      "seed": self.module_seed()})
        value = reply["value"]
        module = LearnerModule(int(value["handle"]), dict(value["children"]), dict(value["parameters"]))
        if state is not None or dtype is not None:
            self.session.request({
                "op": "set_state", "handle": module.handle, "state": state or {}, "device": self.device,
                "dtype": str(dtype).removeprefix("torch.") if dtype is not None else None,
            })
        return module

    def _send(self, request: dict[str, Any], options: dict[str, Any] | None) -> Reply:
        request.update(options or {})
        request["device"] = self.device
        response = self.session.request(request)
        grads = response.get("grads") or {}
        return Reply(response.get("value"), grads.get("values", {}), grads.get("error", ""),
                     response.get("inputs_after", {}))
