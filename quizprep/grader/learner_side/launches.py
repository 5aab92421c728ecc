"""Triton kernel launches made during one learner call, counted on the path every launch takes:
`JITFunction.run` when compiled and `InterpretedFunction.run` under TRITON_INTERPRET=1 (autotuners,
heuristics and `kernel[grid](...)` all end there). The Triton track's output must come from a
kernel, and source text cannot say whether one ran. Loaded by the worker from its file; imports
nothing of quizprep."""
from __future__ import annotations

import sys
from typing import Any


class LaunchCounter:
    def __init__(self) -> None:
        self.count = 0
        self.installed = False

    def start(self) -> None:
        """Zero the count, wrapping Triton's launch methods once Triton is imported (by the learner's
        file: a file that never imports it launches nothing)."""
        self.count = 0
        if self.installed or "triton" not in sys.modules:
            return
        from triton.runtime import interpreter, jit

        for kind in (jit.JITFunction, interpreter.InterpretedFunction):
            kind.run = self._counting(kind.run)
        self.installed = True

    def _counting(self, launch: Any) -> Any:
        def run(kernel: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            if not warmup:
                self.count += 1
            return launch(kernel, *args, grid=grid, warmup=warmup, **kwargs)

        return run
