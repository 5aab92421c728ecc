"""What an exercise forbids (SDPA, nn.MultiheadAttention, softmax), enforced in the learner's process.

Three layers, from the friendliest report to the one learner code cannot take down:

* the public functions and classes are replaced by ones that raise :class:`ForbiddenCall`, so the
  report names the call the learner wrote (``torch.nn.functional.scaled_dot_product_attention``);
* a TorchFunctionMode, entered around each graded call, names the same kernels reached by other
  Python routes (``torch.ops.aten``, ``torch._C._VariableFunctions``);
* the original Python functions behind those names, and PyTorch's own Python implementations of
  the same kernels (``torch._decomp``, ``torch._refs``) and modules (the quantizable
  ``MultiheadAttention``), have their code replaced in place: a reference to the original found
  through ``gc``, ``__wrapped__`` or a decomposition table runs the refusal, not the kernel;
* every ATen (and quantized) operator whose name matches the forbidden group gets a kernel that
  raises, registered in PyTorch's dispatcher for every backend and composite key that computes
  it. Popping the mode, emptying Python state found through ``gc`` or frames, or scripting the call
  with TorchScript all end in the dispatcher, which has no other kernel left to run for that key.
  The library handle holding those registrations is referenced from nowhere Python can reach
  (pybind objects are invisible to ``gc.get_objects()``), so it cannot be destroyed to undo them.

The groups are fixed when the worker starts; a worker serves one exercise. This module is loaded
by the worker from its file and imports nothing of quizprep.
"""
from __future__ import annotations

import ctypes
import functools
import sys
import types
import weakref
import warnings
from typing import Any, Callable, Iterable

# Parts of operator and function names, per group.
FORBIDDEN_NAME_PARTS = {
    "sdpa": ("scaled_dot_product", "scaled_dot_attention", "flash_attention", "efficient_attention",
             "cudnn_attention", "flex_attention"),
    "mha": ("multi_head_attention", "transformer_encoder_layer"),
    # An attention kernel computes a softmax (SDPA with q = 0, v = I and the logits as its mask).
    "softmax": ("softmax", "scaled_dot_product", "scaled_dot_attention", "flash_attention", "efficient_attention",
                "cudnn_attention", "flex_attention", "multi_head_attention", "transformer_encoder_layer"),
}
# PyTorch's Python implementations of ATen operators, loaded with torch.
PYTHON_KERNEL_MODULES = ("torch._decomp", "torch._refs", "torch._prims")
# Modules that torch does not load itself, holding attention written in Python from allowed operators:
# disarmed once imported, before the next graded call. torch.onnx.ops.attention's eager reference
# passed attention, mha, gqa, paged_decode and sliding_window, reached by names the source scan could
# not read (seventh and eighth red teams).
LATE_ATTENTION_MODULES = ("torch.onnx.ops",)
# The keys where a kernel computes values. Autograd kernels redispatch to these; Meta computes
# shapes only.
VALUE_KEYS = (
    "CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional",
    "CPU", "CUDA", "MPS", "XPU", "QuantizedCPU", "QuantizedCUDA", "SparseCPU", "SparseCUDA",
    "SparseCsrCPU", "SparseCsrCUDA", "NestedTensorCPU", "NestedTensorCUDA",
)
NAMESPACES = ("aten::", "quantized::")


class ForbiddenCall(BaseException):
    """Raised inside learner code; a BaseException so `except Exception` cannot swallow it."""


Record = Callable[[str], None]


class Guards:
    """`record(label)` is told of each forbidden call before it raises (the worker keeps the
    learner's line). `mode` is the TorchFunctionMode to enter around each graded call."""

    def __init__(self, groups: Iterable[str], record: Record) -> None:
        self.groups = frozenset(groups)
        self.parts = tuple(part for group in sorted(self.groups) for part in FORBIDDEN_NAME_PARTS.get(group, ()))
        self.record = record
        self.note_host_copy: Callable[[str], None] = lambda label: None  # the worker keeps the learner's line
        self.mode: Any = None
        self.modules_seen = 0  # len(sys.modules) when late modules were last looked for
        # set by the worker around a NumPy track call: the learner was handed arrays, and any torch
        # function it reaches (a torch answer converted back) is refused
        self.numpy_only = False

    def install(self) -> None:
        self.mode = _forbidden_mode(self)
        self._patch_public_routes()
        self._disarm_python_kernels()
        self._disarm_module_classes()
        self._register_dispatcher_kernels()

    def disarm_late_modules(self) -> None:
        """PyTorch's Python attention in modules imported since the last graded call (LATE_ATTENTION_MODULES)."""
        if len(sys.modules) == self.modules_seen or not self.groups & {"sdpa", "mha", "softmax"}:
            return
        self.modules_seen = len(sys.modules)
        for name, module in list(sys.modules.items()):
            if module is None or not name.startswith(LATE_ATTENTION_MODULES):
                continue
            for value in list(vars(module).values()):
                function = getattr(value, "_init_fn", value)  # a torch.library custom op's Python body
                if isinstance(function, types.FunctionType) and "attention" in function.__name__.lower() and \
                        function.__module__ == name:
                    self._disarm(function, f"{name}.{function.__name__}")

    def forbids(self, name: str) -> bool:
        return any(part in name for part in self.parts)

    def refuse(self, label: str) -> ForbiddenCall:
        self.record(label)
        return ForbiddenCall(f"{label} is not allowed in this exercise")

    def refusing(self, label: str) -> Callable[..., Any]:
        """A function that refuses `label` whatever it is called with."""
        def forbidden(*args: Any, **kwargs: Any) -> Any:
            raise self.refuse(label)

        return forbidden

    # -- layer 1: the names learners write ------------------------------------------------
    def _patch_public_routes(self) -> None:
        import torch
        import torch.nn.functional as F

        if "sdpa" in self.groups:
            label = "torch.nn.functional.scaled_dot_product_attention"
            self._patch(F, "scaled_dot_product_attention", label)
            self._patch(torch._C._nn, "scaled_dot_product_attention", label)
            for name in dir(torch):
                if name.startswith("_scaled_dot_product"):
                    self._patch(torch, name, f"torch.{name}")
            self._refuse_flex_attention()
        if "mha" in self.groups:
            self._patch(F, "multi_head_attention_forward", "torch.nn.functional.multi_head_attention_forward")
            self._patch(torch, "_native_multi_head_attention", "torch._native_multi_head_attention")
            self._patch_class(torch.nn, "MultiheadAttention", "torch.nn.MultiheadAttention")
            self._patch_class(torch.nn.modules.activation, "MultiheadAttention", "torch.nn.MultiheadAttention")
        if "autograd" in self.groups:
            self._refuse_autograd()
        if "softmax" in self.groups:
            for owner, prefix in ((torch, "torch"), (torch.Tensor, "Tensor"), (F, "torch.nn.functional"),
                                  (torch.special, "torch.special")):
                for name in ("softmax", "_softmax", "log_softmax"):
                    self._patch(owner, name, f"{prefix}.{name}")

    def _refuse_autograd(self) -> None:
        """The backward exercise's gradients are the learner's to derive: the engine every reverse-mode
        route runs (autograd.grad, Tensor.backward, torch.func's grad and vjp) refuses, and so do the
        public names, forward mode (jvp, jacfwd) included. torch.autograd.grad of each key tile passed
        the tiled memory check (eighth red team)."""
        import torch
        import torch.autograd.forward_ad as forward_ad
        import torch.autograd.functional as functional
        from torch.autograd.variable import Variable

        label = "torch.autograd (this exercise is the backward pass, by hand)"
        refuse = self.refusing(label)

        class RefusingEngine:
            def __getattr__(self, name: str) -> Any:
                return refuse

        Variable._execution_engine = RefusingEngine()  # type: ignore[assignment]
        self._patch(torch.autograd, "grad", label)
        self._patch(torch.autograd, "backward", label)
        self._patch(torch.Tensor, "backward", label)
        self._patch(forward_ad, "make_dual", label)
        for module in (torch.func, functional):
            for name in ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
                         "jacobian", "vhp", "hvp"):
                self._patch(module, name, label)

    def _refuse_flex_attention(self) -> None:
        """flex_attention is a higher-order operator, outside the dispatcher's operator table: its
        Python kernels, which every route to it (eager or compiled) ends in, are replaced."""
        try:
            from torch._higher_order_ops.flex_attention import flex_attention as operator
            from torch.nn.attention import flex_attention as module
        except ImportError:  # a PyTorch without it
            return
        label = "torch.nn.attention.flex_attention.flex_attention"
        self._patch(module, "flex_attention", label)
        for key in list(operator.py_kernels):
            operator.py_kernels[key] = self.refusing(label)
        getattr(operator, "_dispatch_cache", {}).clear()
        # Its Python bodies too: math_attention and sdpa_dense compute the whole attention from
        # allowed operators when called directly (a red team's forged pass).
        bodies = sys.modules.get("torch._higher_order_ops.flex_attention")
        if bodies is None:
            return
        for name, value in list(vars(bodies).items()):
            if isinstance(value, types.FunctionType) and value.__module__ == bodies.__name__ and \
                    ("attention" in name or "sdpa" in name):
                self._disarm(value, f"{bodies.__name__}.{name}")

    def _patch(self, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name, None)
        if original is None:
            return
        forbidden = self.refusing(label)
        forbidden.__name__ = name
        setattr(owner, name, forbidden)
        self._disarm(original, label)

    def _disarm_python_kernels(self) -> None:
        """torch._decomp's and torch._refs' versions of a forbidden kernel compute it from allowed
        operators (exp, amax, bmm), so the dispatcher never sees the forbidden one."""
        if not self.parts:
            return
        for module in [module for name, module in list(sys.modules.items())
                       if name.startswith(PYTHON_KERNEL_MODULES) and module is not None]:
            for value in list(vars(module).values()):
                if isinstance(value, types.FunctionType) and self.forbids(value.__name__):
                    self._disarm(value, f"{value.__module__}.{value.__name__}")

    def _disarm_module_classes(self) -> None:
        """Every class torch loads (nn.Module or not) whose name spells a forbidden part
        (MultiheadAttention for multi_head_attention) refuses in each of its methods: torch.ao's
        quantizable MultiheadAttention computes the whole module from bmm and softmax, and passed
        the mha exercise (third red team); distributions' SoftmaxTransform, no module, the softmax
        exercise (seventh and eighth)."""
        spelled = tuple(part.replace("_", "") for part in self.parts)
        if not spelled:
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated names (torch.distributed.reduce_op) warn when typed
            for module in [module for name, module in list(sys.modules.items())
                           if name.startswith("torch.") and module is not None]:
                for value in list(vars(module).values()):
                    # torch's own classes: the refusing subclasses put in torch.nn's place say
                    # their public name already (a label with this module's name told nothing).
                    if isinstance(value, type) and value.__module__.startswith("torch") and \
                            any(part in value.__name__.lower() for part in spelled):
                        for method in list(vars(value).values()):
                            self._disarm(method, f"{value.__module__}.{value.__qualname__}")

    def _disarm(self, function: Any, label: str) -> None:
        """The function object itself (and each one it wraps) refuses: replacing the name is not
        enough where a reference to the original is reachable."""
        seen = set()
        while isinstance(function, types.FunctionType) and id(function) not in seen:
            seen.add(id(function))
            wrapped = getattr(function, "__wrapped__", None)
            function.__code__ = _refusing_code(len(function.__code__.co_freevars))
            function.__defaults__ = None
            function.__kwdefaults__ = {"_quizprep_refusal": functools.partial(self.refuse, label)}
            function = wrapped

    def _patch_class(self, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name, None)
        if original is None:
            return
        guards = self

        class Forbidden(original):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                raise guards.refuse(label)

        Forbidden.__name__ = Forbidden.__qualname__ = name
        setattr(owner, name, Forbidden)

    # -- layer 3 (layer 2 is _forbidden_mode): the dispatcher ---------------------------------
    def _register_dispatcher_kernels(self) -> None:
        import torch

        if not self.parts:
            return
        libraries: dict[str, Any] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Overriding a previously registered kernel": the point
            for qualified in sorted(torch._C._dispatch_get_all_op_names()):
                namespace, _, name = qualified.partition("::")
                if f"{namespace}::" not in NAMESPACES or not self.forbids(name):
                    continue
                kernel = self.refusing(f"torch.ops.{namespace}.{name.split('.')[0]}")
                for key in VALUE_KEYS:
                    if torch._C._dispatch_has_kernel_for_dispatch_key(qualified, key):
                        if namespace not in libraries:
                            libraries[namespace] = torch._C._dispatch_library(
                                "IMPL", namespace, "", "quizprep guard", 0)
                        libraries[namespace].impl(name, key, kernel, False)
        for library in libraries.values():
            # One reference that no Python object holds: the registrations last as long as the process.
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(library))


@functools.cache
def _refusing_code(free_variables: int) -> types.CodeType:
    """The code of a function that only raises what its keyword default makes, with as many free
    variables as the function it goes into has closure cells (CPython requires the counts to match)."""
    names = [f"_cell{i}" for i in range(free_variables)]
    source = ("def _outer():\n" + "".join(f"    {name} = None\n" for name in names)
              + "    def refused(*args, _quizprep_refusal, **kwargs):\n"
              + (f"        {', '.join(names)}\n" if names else "")
              + "        raise _quizprep_refusal()\n    return refused\n")
    namespace: dict[str, Any] = {}
    exec(compile(source, "<quizprep guard>", "exec"), namespace)  # a fixed source, built above
    code: types.CodeType = namespace["_outer"]().__code__
    return code


# A tensor read into NumPy works on a CPU only: code that does so while its inputs are on the CPU, and
# answers a meta input without it, passed the device check (sixth red team).
HOST_COPIES = {"numpy": "Tensor.numpy()", "__array__": "a tensor handed to NumPy",
               "__dlpack__": "a tensor handed on by DLPack (np.from_dlpack)"}
# Floating-point values read into Python: right on every device, but outside the audits (a whole-row max
# by Python's max over tolist() passed online_softmax's one-pass check; seventh red team).
PYTHON_VALUES = "Tensor.tolist() of floating-point values"


def _forbidden_mode(guards: Guards) -> Any:
    """A TorchFunctionMode that names every forbidden torch function the learner's call reaches."""
    from torch.overrides import TorchFunctionMode

    import torch

    moved_to_host: dict[int, Any] = {}  # id -> a weak reference: a tensor's == is elementwise, no set holds it

    def forget(key: int, _: Any) -> None:
        moved_to_host.pop(key, None)

    def on_host(tensor: Any) -> bool:
        held = moved_to_host.get(id(tensor))
        return held is not None and held() is tensor

    def floating_values(value: Any) -> bool:
        return isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel() > 1

    class ForbiddenKernels(TorchFunctionMode):
        def __enter__(self) -> Any:
            guards.disarm_late_modules()
            return super().__enter__()

        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            name = getattr(func, "__name__", "")
            if guards.forbids(name):
                raise guards.refuse(_torch_label(func))
            if guards.numpy_only:
                raise guards.refuse(f"{_torch_label(func)} on the NumPy track")
            if name in HOST_COPIES and args and not on_host(args[0]):
                guards.note_host_copy(HOST_COPIES[name])
            elif name == "tolist" and args and floating_values(args[0]):
                guards.note_host_copy(PYTHON_VALUES)
            result = func(*args, **(kwargs or {}))
            if _to_host(name, args, kwargs or {}) and isinstance(result, torch.Tensor):
                # block_tables.cpu().numpy() (vLLM) works on every device
                key = id(result)
                moved_to_host[key] = weakref.ref(result, functools.partial(forget, key))
            return result

    return ForbiddenKernels()


def _to_host(name: str, args: Any, kwargs: dict[str, Any]) -> bool:
    """`.cpu()`, or `.to()` given the CPU as its device: the code asked for a host copy."""
    if name == "cpu":
        return True
    if name != "to":
        return False
    targets = [*args[1:], kwargs.get("device")]
    return any(str(getattr(target, "type", target)).split(":")[0] == "cpu" for target in targets
               if isinstance(target, str) or hasattr(target, "type"))


def _torch_label(func: Any) -> str:
    module = getattr(func, "__module__", None) or ""
    name = getattr(func, "__name__", repr(func))
    if module.startswith("torch._ops."):
        return f"torch.ops.{module.removeprefix('torch._ops.')}.{name}"
    return f"{module}.{name}" if module.startswith("torch") else f"torch.{name}"

