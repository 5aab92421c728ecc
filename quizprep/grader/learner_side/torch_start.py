"""The worker's start: torch imported and its first kernels run before any limit or guard
applies, and Triton pointed at the only directory the worker may write. Loaded by the worker and
the fork server from its file; imports nothing of quizprep."""
from __future__ import annotations

import gc
import os
import sys
from types import FunctionType
from typing import Any


def import_torch(threads: int, *, before_fork: bool = False, warm_up: bool = True) -> None:
    """Import torch and run its first kernels, before any limit or guard applies. `before_fork`:
    in a fork server, which must leave CUDA untouched for its children. Without `warm_up` (the
    Triton track: forward kernels only, no gradient and no meta-device check) the warm-ups that
    only those need are skipped, seconds of every start."""
    import torch

    torch.set_num_threads(threads)
    keep_thread_count(torch)
    if not warm_up:
        return
    warm = torch.randn(8, 8, requires_grad=True)
    out = torch.softmax(warm @ warm, dim=-1)
    # The first autograd.grad imports torch.fx's symbolic shapes and sympy (about 1 s): done here,
    # it counts against no check's time limit and a fork server's children start with it.
    if before_fork and torch.backends.cuda.is_built():
        # On a CUDA build autograd's first run counts the GPUs (initialising the driver) and starts
        # a thread per GPU, after which a forked child can use neither CUDA nor autograd.
        import torch.fx.experimental.symbolic_shapes  # the import the warm-up is for
    else:
        torch.autograd.grad(out, warm, torch.ones_like(out))
    # The device check's first meta-device arithmetic imports PyTorch's Python meta kernels
    # (seconds): here they load once per torch import, fork-server children included.
    meta = torch.empty(2, 2, device="meta")
    meta.amax(-1, keepdim=True)  # a reduction: imports the meta kernels and decompositions, not torch._dynamo
    run_without_dynamo()
    (meta - meta.amax(-1, keepdim=True)).exp()
    if before_fork and torch.cuda.is_initialized():
        raise RuntimeError("CUDA was initialised before forking")


def keep_thread_count(torch: Any) -> None:
    """The grader sets how many threads torch computes with: it is the worker's CPU share, and the
    memory checks count any other thread as the learner's. A correct flash that called
    torch.set_num_threads(4) at import left three idle OpenMP threads that failed its memory check
    (seventh red team). A learner's request for another count is accepted and changes nothing."""
    def set_num_threads(count: int) -> None:
        """The grader's worker keeps the thread count it was given."""

    torch.set_num_threads = set_num_threads
    torch.set_num_interop_threads = set_num_threads


def run_without_dynamo() -> int:
    """PyTorch wraps its Python kernels (the meta device's elementwise ones among them) to run with
    TorchDynamo off, and each wrapper imports torch._dynamo on its first call only to build that
    'off' version of its function (1.5-2 s of the worker's CPU: Dynamo, Inductor, Triton). Until
    something imports torch._dynamo nothing is being compiled, so the function itself is what
    'off' runs: each wrapper made so far is given it as its 'off' version (torch's own cache for
    it) and calls it without the import. Wrappers made later, or a torch whose wrapper differs,
    import torch._dynamo as before; a torch.compile in the learner's code (which imports it) would
    trace into these kernels instead of around them. Returns how many wrappers were given theirs."""
    if "torch._dynamo" in sys.modules:
        return 0
    from torch import _compile

    wrapper_code = _compile._disable_dynamo(run_without_dynamo).__code__
    if "fn" not in wrapper_code.co_freevars:
        return 0
    given = 0
    for wrapper in gc.get_referrers(wrapper_code):
        if isinstance(wrapper, FunctionType) and wrapper.__closure__:
            # the function the wrapper calls, as it reads it (its __wrapped__ may have been reassigned)
            wrapped = wrapper.__closure__[wrapper_code.co_freevars.index("fn")].cell_contents
            setattr(wrapped, "__dynamo_disable", wrapped)  # the name torch._compile reads it by
            given += 1
    return given


def run_compiled_code_eagerly() -> None:
    """torch.compile a no-op: code the learner compiled is graded as written, eagerly. Dynamo
    would trace into the grader's own guards (whose source the jail keeps from it) and Inductor
    spawn a C++ compiler the jail does not have."""
    os.environ["TORCH_COMPILE_DISABLE"] = "1"  # read when torch._dynamo.config is first imported


def configure_triton(private_dir: str | None) -> None:
    """Triton kernels (the flash-triton track) run through Triton's interpreter where there is no
    CUDA, and cache compiled kernels in the only directory the worker may write."""
    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    if private_dir:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(private_dir, "triton")
