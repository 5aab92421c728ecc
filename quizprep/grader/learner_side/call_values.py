"""Values crossing into and out of the learner's call, in the worker: inputs moved to the device
and made non-contiguous or differentiable on request, the NumPy track's arrays, the memory
audit's summary and the result's gradients. Loaded by the worker from its file; imports nothing
of quizprep."""
from __future__ import annotations

from typing import Any


def memory_summary(report: Any, keep: int = 16) -> dict[str, Any]:
    """The audit's peak and its largest allocations: enough to spot a score-sized tensor."""
    largest = sorted(report.allocations, key=lambda allocation: allocation.nbytes, reverse=True)[:keep]
    return {"peak_live_bytes": report.peak_live_bytes, "mode_removed": report.mode_removed,
            "largest": [{"op": a.op, "shape": list(a.shape), "nbytes": a.nbytes} for a in largest],
            "widest_fold": report.fold_summary()}


def to_numpy(value: Any) -> Any:
    """The NumPy track: the learner receives arrays that share memory with the prepared tensors,
    so in-place changes still show in return_inputs."""
    import torch

    if isinstance(value, (list, tuple)):
        return type(value)(to_numpy(v) for v in value)
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value


def from_numpy(value: Any) -> Any:
    """Arrays the learner returns become tensors for the channel; anything else is left for the
    grader to name."""
    import numpy as np
    import torch

    if isinstance(value, (list, tuple)):
        items = [from_numpy(v) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiub":
        return torch.from_numpy(np.ascontiguousarray(value))
    return value


def wants_grad(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor) and value.requires_grad


def gradients(value: Any, request: dict[str, Any], args: list[Any], kwargs: dict[str, Any],
              parameters: dict[str, Any]) -> dict[str, Any]:
    """The gradients of the output the request's `grad_path` names, against `grad_output`, for
    every input that asked for one and every parameter; an error when the output has none."""
    import torch

    output = value
    for index in request.get("grad_path", []):
        if not isinstance(output, (tuple, list)) or len(output) <= index:
            raise TypeError("the result does not have the expected structure for a gradient check")
        output = output[index]
    if not isinstance(output, torch.Tensor) or not output.requires_grad:
        return {"error": "the output does not depend differentiably on the inputs "
                         "(computed under no_grad, detached, or converted through numpy?)"}
    named = [(f"arg{i}", a) for i, a in enumerate(args) if wants_grad(a)]
    named += [(k, a) for k, a in kwargs.items() if wants_grad(a)]
    named += [(f"param:{k}", p) for k, p in parameters.items()]
    grad_output = request["grad_output"].to(device=output.device, dtype=output.dtype)
    grads = torch.autograd.grad(output, [t for _, t in named], grad_output, allow_unused=True)
    return {"values": {name: g for (name, _), g in zip(named, grads)}}

class Preparer:
    """Moves tensors to the device and makes them non-contiguous or differentiable on request.
    `noncontiguous` is True (strided along the last axis), "transposed" (the last two axes stored
    column-major, as after .transpose(-2, -1)), "expanded" (an axis whose slices are all equal
    handed over as a stride-0 expand(), as GQA's expanded KV heads are) or "heads-major" (a
    (B, H, n, d) tensor stored as (B, n, H, d), as after a projection's .transpose(1, 2)) or
    "cache-transposed" (the first n key slots of a feature-major cache with room for 2n)."""

    def __init__(self, device: str, noncontiguous: bool | str, requires_grad: bool) -> None:
        self.device, self.noncontiguous, self.requires_grad = device, noncontiguous, requires_grad

    def laid_out(self, layout: bool | str) -> Preparer:
        """The same preparation with another layout: each input of a call may have its own."""
        return Preparer(self.device, layout, self.requires_grad)

    def __call__(self, value: Any) -> Any:
        import torch

        if isinstance(value, (list, tuple)):
            return type(value)(self(v) for v in value)
        if not isinstance(value, torch.Tensor):
            return value
        tensor = value.to(self.device)
        if self.noncontiguous == "transposed" and tensor.dim() >= 2:
            tensor = tensor.transpose(-2, -1).contiguous().transpose(-2, -1)
        elif self.noncontiguous == "expanded":
            tensor = _expanded(tensor)
        elif self.noncontiguous == "heads-major" and tensor.dim() == 4:
            tensor = tensor.transpose(1, 2).contiguous().transpose(1, 2)
        elif self.noncontiguous == "cache-transposed" and tensor.dim() >= 2:
            n = tensor.shape[-2]
            cache = torch.zeros(*tensor.shape[:-2], tensor.shape[-1], 2 * n, dtype=tensor.dtype, device=tensor.device)
            cache[..., :n] = tensor.transpose(-2, -1)
            tensor = cache[..., :n].transpose(-2, -1)
        elif self.noncontiguous and tensor.dim() >= 1 and tensor.numel() > 1:
            wide = torch.zeros(*tensor.shape[:-1], tensor.shape[-1] * 2, dtype=tensor.dtype, device=tensor.device)
            wide[..., ::2] = tensor
            tensor = wide[..., ::2]
        if self.requires_grad and tensor.is_floating_point():
            tensor = tensor.detach().requires_grad_(True)
        return tensor


def _expanded(tensor: Any) -> Any:
    """The same values as a stride-0 view along the first leading axis whose slices are all equal."""
    for axis in range(tensor.dim() - 2):
        first = tensor.narrow(axis, 0, 1)
        if tensor.shape[axis] > 1 and bool((tensor == first).all()):
            return first.expand_as(tensor)
    return tensor
