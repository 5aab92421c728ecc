"""Which line of the learner's file issued each tensor op, in the worker: the grader replays a
case that failed with a named mistake under this recorder, to quote the line the mistake lives on.
It only picks a line to show, never a verdict. Loaded by the worker from its file; imports nothing
of quizprep."""
from __future__ import annotations

import linecache
import sys
from typing import Any

from torch import Tensor
from torch.overrides import TorchFunctionMode

MAX_ENTRIES = 300  # distinct (op, line) pairs: a loop over a batch repeats the same few
CODE_LIMIT = 200
SAMPLE_SIZE = 16  # values by rank of each result, with `values`: the grader looks for the bug's telltale in them
# elements sorted for samples in one replay, all results together: past it, results go unsampled
SAMPLED_NUMEL = 1 << 22


class OpRecorder(TorchFunctionMode):
    """Notes each op's name, its first operand's and its result's kinds and the learner's line that
    issued it, once per distinct entry, in first-seen order; with `values`, also a sample of the
    entry's first result (its shape and its values at fixed ranks)."""

    def __init__(self, learner_path: str, values: bool = False) -> None:
        super().__init__()
        self.learner_path = learner_path
        self.unsampled = SAMPLED_NUMEL if values else 0  # elements left to sort for samples
        self.seen: dict[tuple[str, str, str, int], dict[str, Any]] = {}

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        result = func(*args, **(kwargs or {}))
        if len(self.seen) < MAX_ENTRIES:
            line = self._learner_line(sys._getframe(1))
            key = (op_name(func), operand_kind(args), tensor_kind(result), line)
            if line and key not in self.seen:
                self.seen[key] = self._sampled(result)
        return result

    def _sampled(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, Tensor) or value.numel() > self.unsampled:
            return {}
        self.unsampled -= value.numel()
        return value_sample(value)

    def _learner_line(self, frame: Any) -> int:
        """The line of the innermost frame in the learner's file: the one that issued the op."""
        while frame is not None and frame.f_code.co_filename != self.learner_path:
            frame = frame.f_back
        return frame.f_lineno if frame is not None else 0

    def entries(self) -> list[dict[str, Any]]:
        return [{"op": op, "operand": operand, "result": result, "line": line,
                 "code": linecache.getline(self.learner_path, line).strip()[:CODE_LIMIT], **sample}
                for (op, operand, result, line), sample in self.seen.items()]


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
    non-tensor."""
    import torch

    if not isinstance(value, Tensor) or value.is_complex() or value.is_meta:
        return {}
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
