"""Triton kernel launches made during one learner call, counted on the path every launch takes:
`JITFunction.run` when compiled and `InterpretedFunction.run` under TRITON_INTERPRET=1 (autotuners,
heuristics and `kernel[grid](...)` all end there). The Triton track's output must come from a
kernel, and source text cannot say whether one ran.

Interpreted, each tl.load and tl.store is also checked against the memory of the tensors passed to
the launch: the interpreter dereferences raw addresses, so an address past a tensor (a swapped grid,
an unmasked tail store) reads or corrupts the heap and kills the process at a line that changes
between runs. Raised instead as an IndexError at the learner's own tl.load/tl.store line, with the
launch's grid and program. The addresses stored are kept too: a returned tensor that a launch was
given but whose elements no program stored (a grid that misses some tiles or heads) holds whatever
torch.empty left there, which reads as noise, not as the grid's mistake. The elements loaded are
counted: a kernel that computes attention loads at least every element of q, k and v (or of the
copies the host made of them), while one that only copies a result PyTorch computed loads far fewer
(third red team). Loaded by the worker from its file; imports nothing of quizprep."""
from __future__ import annotations

import sys
from typing import Any

OUT_OF_BOUNDS = "outside every tensor passed to the kernel"
RETURNED_CHECKED = 4  # the first returned values are the outputs (out, lse); a long list is not one
ELEMENTS_CHECKED = 1 << 24  # larger outputs than any interpreted check makes are not checked


class LaunchCounter:
    def __init__(self) -> None:
        self.count = 0
        self.installed = False
        self.extents: list[tuple[int, int]] = []  # [start, end) of each tensor argument's memory
        self.shapes: list[tuple[int, ...]] = []
        self.without_mask = False  # inside a tl.load/tl.store written without mask=
        self.stored: list[Any] = []  # the addresses each interpreted tl.store wrote (numpy arrays)
        self.loaded = 0  # elements interpreted tl.loads read
        self.grid: tuple[int, ...] = ()  # the last interpreted program's grid

    def start(self) -> None:
        """Zero the count, wrapping Triton's launch methods once Triton is imported (by the learner's
        file: a file that never imports it launches nothing)."""
        self.count = self.loaded = 0
        self.stored, self.grid = [], ()
        if self.installed or "triton" not in sys.modules:
            return
        from triton.runtime import interpreter, jit

        for kind in (jit.JITFunction, interpreter.InterpretedFunction):
            kind.run = self._counting(kind.run)
        builder = interpreter.InterpreterBuilder
        builder.create_masked_load = self._checked(builder.create_masked_load, "load", mask_at=1)
        builder.create_masked_store = self._checked(builder.create_masked_store, "store", mask_at=2)
        for name in ("create_load", "create_store"):  # tl.load/tl.store without mask= (they add one)
            setattr(builder, name, self._unmasked(getattr(builder, name)))
        for name in ("create_atomic_rmw", "create_atomic_store", "create_atomic_cas"):
            if hasattr(builder, name):  # Triton 3.6's interpreter has no atomic store
                setattr(builder, name, self._atomic(getattr(builder, name)))
        self.installed = True

    def _unmasked(self, access: Any) -> Any:
        def method(builder: Any, *args: Any, **kwargs: Any) -> Any:
            self.without_mask = True
            try:
                return access(builder, *args, **kwargs)
            finally:
                self.without_mask = False

        return method

    def _atomic(self, access: Any) -> Any:
        """An atomic writes where its pointers point (counted whole, mask or not: an address taken as
        written can only hide a hole, never invent one)."""
        def method(builder: Any, *args: Any, **kwargs: Any) -> Any:
            ptrs = next(arg for arg in args if hasattr(arg, "get_element_ty"))
            self.stored.append(ptrs.data.reshape(-1).copy())
            return access(builder, *args, **kwargs)

        return method

    def _counting(self, launch: Any) -> Any:
        def run(kernel: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            if not warmup:
                self.count += 1
                # a host-side TensorDescriptor addresses its base tensor's memory
                values = [getattr(a, "base", a) for a in (*args, *kwargs.values())]
                pointers = [a for a in values if hasattr(a, "data_ptr")]
                tensors = [a for a in pointers if hasattr(a, "untyped_storage")]
                # a wrapped tensor (triton.reinterpret) hides its memory: nothing is checked then
                self.extents = [] if len(tensors) < len(pointers) else [
                    (t.untyped_storage().data_ptr(), t.untyped_storage().data_ptr() + t.untyped_storage().nbytes())
                    for t in tensors]
                self.shapes = [tuple(t.shape) for t in tensors]
            return launch(kernel, *args, grid=grid, warmup=warmup, **kwargs)

        return run

    def _checked(self, access: Any, kind: str, mask_at: int) -> Any:
        import numpy as np

        def method(builder: Any, ptrs: Any, *rest: Any, **kwargs: Any) -> Any:
            given = rest[mask_at - 1] if len(rest) >= mask_at else kwargs.get("mask")
            mask = np.broadcast_to(given.data if given is not None else True, ptrs.data.shape)
            addresses = ptrs.data[mask]
            if addresses.size and self.extents:
                size = np.dtype(_element_dtype(ptrs)).itemsize
                inside = np.zeros(addresses.shape, dtype=bool)
                for begin, end in self.extents:
                    inside |= (addresses >= begin) & (addresses + size <= end)
                if not inside.all():
                    raise IndexError(
                        f"{'an unmasked' if self.without_mask else 'a masked'} tl.{kind} "
                        f"{'writes' if kind == 'store' else 'reads'} {OUT_OF_BOUNDS}: "
                        f"{int((~inside).sum())} of {addresses.size} addresses (program {builder.grid_idx} "
                        f"of grid {builder.grid_dim}; tensors {', '.join(str(s) for s in self.shapes)})")
            if kind == "store":
                self.stored.append(addresses.copy())
                self.grid = tuple(int(size) for size in builder.grid_dim)
            else:
                self.loaded += int(addresses.size)
            return access(builder, ptrs, *rest, **kwargs)

        return method

    def unwritten(self, value: Any) -> list[Any] | None:
        """For each tensor `value` returns (one, or a tuple's), where its elements were never stored by
        an interpreted launch: a bool tensor of its shape, or None for a tensor no launch was given (made
        on the host) or when nothing was checked (compiled, or no store seen)."""
        if not self.stored or not self.extents:
            return None
        import numpy as np
        import torch

        written = np.concatenate(self.stored)
        values = value[:RETURNED_CHECKED] if isinstance(value, (tuple, list)) else (value,)
        return [self._holes(item, written) if isinstance(item, torch.Tensor) else None for item in values]

    def _holes(self, tensor: Any, written: Any) -> Any:
        import numpy as np
        import torch

        start = tensor.untyped_storage().data_ptr() if tensor.device.type == "cpu" else None
        if start is None or not any(begin == start for begin, _ in self.extents) or \
                not 0 < tensor.numel() <= ELEMENTS_CHECKED:
            return None
        offsets = torch.zeros((), dtype=torch.int64)
        for size, stride in zip(tensor.shape, tensor.stride()):
            offsets = offsets[..., None] + torch.arange(size, dtype=torch.int64) * stride
        addresses = tensor.data_ptr() + offsets.numpy() * tensor.element_size()
        return torch.from_numpy(~np.isin(addresses, written))


def mend_interpreter() -> None:
    """Let Triton 3.6's interpreter run under NumPy 2.4 (once Triton is imported; again is a no-op).

    Interpreted, a scalar is a one-element array, and 3.6 takes its Python int (``range(0, n,
    BLOCK)`` with a loaded or computed bound) as ``int(array)``, which NumPy 2.4 refuses for an
    array of one dimension: every such kernel failed with "only 0-dimensional arrays can be
    converted to Python scalars" at the learner's launch line. Later Triton squeezes the array
    first (3.9: ``int(self.handle.data.squeeze())``); so does this, after Triton's own patch."""
    interpreter = sys.modules.get("triton.runtime.interpreter")
    patch = getattr(interpreter, "_patch_lang_tensor", None)
    if patch is None or getattr(patch, "mended", False):
        return

    def patch_lang_tensor(tensor: Any, scope: Any) -> None:
        patch(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))

    patch_lang_tensor.mended = True  # type: ignore[attr-defined]
    interpreter._patch_lang_tensor = patch_lang_tensor  # type: ignore[union-attr]


def _element_dtype(ptrs: Any) -> Any:
    from triton.runtime.interpreter import _get_np_dtype

    return _get_np_dtype(ptrs.get_element_ty())
