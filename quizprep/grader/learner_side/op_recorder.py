"""Which line of the learner's file issued each tensor op, in the worker: the grader replays a
case that failed with a named mistake under this recorder, to quote the line the mistake lives on.
It only picks a line to show, never a verdict. Loaded by the worker from its file; imports nothing
of quizprep."""
from __future__ import annotations

import linecache
import sys
import weakref
from typing import Any

from torch import Tensor
from torch.overrides import TorchFunctionMode

MAX_ENTRIES = 300  # distinct (op, line) pairs: a loop over a batch repeats the same few
CODE_LIMIT = 200
SAMPLE_SIZE = 16  # values by rank of each result, with `values`: the grader looks for the bug's telltale in them
# elements sorted for samples in one replay, all results together: past it, results go unsampled
SAMPLED_NUMEL = 1 << 22
BOUND = "="  # an entry for a tensor a learner's line binds to a name, not for an op
TRACED_LINES = 20_000  # line events of the learner's frames watched for bindings in one replay


class OpRecorder(TorchFunctionMode):
    """Notes each op's name, its first operand's and its result's kinds and the learner's line that
    issued it, once per distinct entry, in first-seen order; with `values`, also a sample of the
    entry's first result (its shape and its values at fixed ranks), and each name a line binds to a
    tensor with a sample of it (a name says what its line meant: `sin` holding cos's values), the
    parameters of the learner's functions bound by the line that called them."""

    def __init__(self, learner_path: str, values: bool = False) -> None:
        super().__init__()
        self.learner_path = learner_path
        self.unsampled = SAMPLED_NUMEL if values else 0  # elements left to sort for samples
        # (op, operand, result, line, name, site): the site, an op's place in its line, only with `values`
        self.seen: dict[tuple[str, str, str, int, str, int], dict[str, Any]] = {}
        self.traced = TRACED_LINES if values else 0  # line events left to watch for bindings
        self.frames: dict[Any, tuple[int, dict[str, int]]] = {}  # frame -> its last line, its tensors' ids
        self.noting = False  # a binding's sample is taken with torch ops that are not the learner's
        self.sampled: dict[int, tuple[Any, dict[str, Any]]] = {}  # id -> (a weak reference, its sample)
        self.outer_trace: Any = None

    def __enter__(self) -> OpRecorder:
        if self.traced:
            self.outer_trace = sys.gettrace()
            sys.settrace(self._traced_call)
        return super().__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self.traced:
            sys.settrace(self.outer_trace)
        super().__exit__(*exc)

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        result = func(*args, **(kwargs or {}))
        if len(self.seen) < MAX_ENTRIES and not self.noting:
            frame = self._learner_frame(sys._getframe(1))
            line = frame.f_lineno if frame is not None else 0
            # with values, each op of a line apart: `(q * sin) + (rotate_half(q) * cos)` has two products
            site = frame.f_lasti if frame is not None and self.traced else 0
            key = (op_name(func), operand_kind(args), tensor_kind(result), line, "", site)
            if line and key not in self.seen:
                self.seen[key] = self._sampled(result)
                if isinstance(result, Tensor):
                    self.sampled[id(result)] = (weakref.ref(result), self.seen[key])
        return result

    def _traced_call(self, frame: Any, event: str, arg: Any) -> Any:
        """Watches the learner's own frames only: a parameter is bound by the learner's line that called."""
        if frame.f_code.co_filename != self.learner_path or self.traced <= 0:
            return None
        caller = frame.f_back
        line = caller.f_lineno if caller is not None and caller.f_code.co_filename == self.learner_path else 0
        self.frames[frame] = (line, {} if line else _tensor_ids(frame))
        return self._traced_line

    def _traced_line(self, frame: Any, event: str, arg: Any) -> Any:
        """Before each line (and at the return), the tensors the line run before bound to a new name or
        object."""
        line, before = self.frames.pop(frame, (0, {}))
        now = _tensor_ids(frame)
        if line:
            for name in [name for name, ident in now.items() if before.get(name) != ident]:
                self._bound(name, frame.f_locals[name], line)
        if event != "return":
            self.frames[frame] = (frame.f_lineno, now)
        self.traced -= 1
        return self._traced_line if self.traced > 0 else None

    def _bound(self, name: str, value: Tensor, line: int) -> None:
        self.noting = True
        try:
            key = (BOUND, "", tensor_kind(value), line, name, 0)
            if len(self.seen) < MAX_ENTRIES and key not in self.seen:
                reference, sample = self.sampled.get(id(value), (None, {}))
                # the result an op of the line just made is not sorted again
                self.seen[key] = sample if reference is not None and reference() is value else self._sampled(value)
        finally:
            self.noting = False

    def _sampled(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, Tensor) or value.numel() > self.unsampled:
            return {}
        self.unsampled -= value.numel()
        return value_sample(value)

    def _learner_frame(self, frame: Any) -> Any:
        """The innermost frame in the learner's file: the one whose line issued the op."""
        while frame is not None and frame.f_code.co_filename != self.learner_path:
            frame = frame.f_back
        return frame

    def entries(self) -> list[dict[str, Any]]:
        return [{"op": op, "operand": operand, "result": result, "line": line, "name": name,
                 "code": linecache.getline(self.learner_path, line).strip()[:CODE_LIMIT], **sample}
                for (op, operand, result, line, name, _), sample in self.seen.items()]


def _tensor_ids(frame: Any) -> dict[str, int]:
    return {name: id(value) for name, value in frame.f_locals.items() if isinstance(value, Tensor)}


def recorder_for(request: dict[str, Any], learner_path: str) -> OpRecorder | None:
    """The recorder a call asks for (`record_ops`, with `record_values` its results' samples), or None."""
    return OpRecorder(learner_path, bool(request.get("record_values"))) if request.get("record_ops") else None


def op_name(func: Any) -> str:
    """`Tensor.__matmul__` and `torch.matmul` are both "matmul"; in-place `masked_fill_` is "masked_fill"."""
    return str(getattr(func, "__name__", "")).strip("_")


def operand_kind(args: Any) -> str:
    """The first operand's kind: indexing a block table (an integer matrix) is told apart from
    indexing a row of lengths."""
    return tensor_kind(args[0] if args else None)


def tensor_kind(value: Any) -> str:
    """A tensor as "int2", "float4" or "half1" (its values' kind and rank; "half" for the 16-bit
    floats, where a RoPE angle loses its precision); "" for anything else."""
    if not isinstance(value, Tensor):
        return ""
    if value.is_floating_point() or value.is_complex():
        kind = "half" if value.is_floating_point() and value.element_size() == 2 else "float"
    else:
        kind = "int"
    return f"{kind}{value.dim()}"


def value_sample(value: Any) -> dict[str, Any]:
    """A result's shape and SAMPLE_SIZE of its finite values at evenly spaced ranks, the least and the
    largest among them: drawn from its values alone, so any order, broadcast or slice of a tensor
    samples values of that tensor. A boolean mask's values tell nothing apart, but how many it keeps
    on each row does (a length mask one key long): those counts are its sample, as `kept`. {} for a
    non-tensor. The grader's own ops, unseen by the guards' mode (its tolist() is not the learner's)."""
    import torch

    if not isinstance(value, Tensor) or value.is_complex() or value.is_meta:
        return {}
    with torch._C.DisableTorchFunction():
        return _value_sample(value)


def _value_sample(value: Tensor) -> dict[str, Any]:
    import torch

    if value.dtype == torch.bool:
        ranked = _ranked(value.sum(-1)) if value.dim() else []
        return {"shape": list(value.shape), "kept": ranked} if ranked else {}
    ranked = _ranked(value)
    return {"shape": list(value.shape), "sample": ranked} if ranked else {}


def _ranked(value: Tensor) -> list[float]:
    """SAMPLE_SIZE of `value`'s finite values at evenly spaced ranks; [] when it has none."""
    import torch

    flat = value.detach().flatten().to("cpu", torch.float64)
    flat = flat[torch.isfinite(flat)].sort().values
    if not len(flat):
        return []
    picked = torch.linspace(0, len(flat) - 1, SAMPLE_SIZE).round().long()
    return flat[picked].tolist()
