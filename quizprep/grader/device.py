"""Where the grader runs the learner's code: the device policy, decided here and nowhere else.

A verdict and its names must not depend on the machine, so under ``--device auto`` every
correctness check runs on the CPU (in the float64/float32 the checks ask for). One added check,
``device``, then runs the learner's code again with its inputs on another device and names
device-placement bugs (a tensor built without ``device=``, ``.numpy()``, a hard-coded ``.cuda()``
or ``.cpu()``) with file:line:

* on the ``meta`` device, on every machine: a meta tensor that meets a CPU tensor raises, and one
  cannot be copied to a real device, so these bugs show without a GPU. Code that needs values
  (``.item()``, ``if mask.any():``) cannot run on meta; such a run proves nothing and fails nothing;
* on CUDA when there is one, in its own worker (a CUDA context needs more address space than the
  CPU worker's memory limit allows), which also catches what meta lets through (a matmul with a
  CPU tensor).

``--device cuda`` runs every check on CUDA; a check that fails there for a placement bug is run
again on the CPU, so its verdict and name are the CPU's, and the device check names the bug.
The NumPy track always runs on the CPU. The Triton track runs every check on the GPU when there
is one (compiled) and on the CPU otherwise (Triton's interpreter, which the grader's environment
selects for every worker whose checks run on the CPU). ``--perf`` times on the GPU when there is one.
"""
from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from typing import Any

from quizprep.grader.spec import Diagnosis

# The whole card is never handed out: CUDA's own context and the caching allocator's slack need some.
GPU_MEMORY_IN_USE = 0.9


@dataclass(frozen=True)
class DevicePolicy:
    requested: str  # auto | cpu | cuda, as asked
    checks: str  # where every correctness check runs
    probes: tuple[str, ...]  # where the device check runs the code again
    perf: str  # where --perf times

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class DeviceUnavailable(ValueError):
    """``--device cuda`` where PyTorch sees no CUDA device."""


def policy_for(requested: str, *, numpy_track: bool = False, gpu_kernels: bool = False) -> DevicePolicy:
    """The policy for `requested` on this machine; CUDA is probed only when it could be used."""
    return decide(requested, cuda=requested != "cpu" and cuda_available(), numpy_track=numpy_track,
                  gpu_kernels=gpu_kernels)


def decide(requested: str, *, cuda: bool, numpy_track: bool = False, gpu_kernels: bool = False) -> DevicePolicy:
    """The policy for `requested` (auto | cpu | cuda) on a machine with or without CUDA."""
    if requested == "cuda" and not cuda:
        raise DeviceUnavailable("--device cuda, but PyTorch sees no CUDA device")
    if numpy_track:
        return DevicePolicy(requested, "cpu", (), "cpu")
    use_gpu = cuda and requested != "cpu"
    if gpu_kernels:
        where = "cuda" if use_gpu else "cpu"
        return DevicePolicy(requested, where, (), where)
    checks = "cuda" if requested == "cuda" else "cpu"
    return DevicePolicy(requested, checks, ("meta", "cuda") if use_gpu else ("meta",), "cuda" if use_gpu else "cpu")


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def gpu_memory_share() -> float:
    """The fraction of the GPU one learner process may allocate: ``QUIZPREP_GPU_MEMORY_FRACTION``
    if set, else an equal share for each pytest-xdist worker (``-n auto`` on one GPU never runs out)."""
    explicit = os.environ.get("QUIZPREP_GPU_MEMORY_FRACTION")
    if explicit:
        return min(1.0, max(0.01, float(explicit)))
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    return GPU_MEMORY_IN_USE / max(1, workers)


NO_QUIZ = ""  # the bank has no question on device placement: a failed grade makes none due
WITHOUT_DEVICE = Diagnosis(
    "device-tensor-without-device",
    "a tensor built without device= stays on the CPU while the inputs are on another device",
    "Build it where the inputs are: torch.arange(n, device=q.device), q.new_full(...), "
    "torch.zeros_like(q), or .to(q.device).", NO_QUIZ)
NUMPY = Diagnosis(
    "device-numpy",
    ".numpy() needs a CPU tensor: on a GPU it raises (and a copy to the host would stall the GPU)",
    "Stay in torch for the whole computation; torch has every operation NumPy would give you.", NO_QUIZ)
HARD_CODED_CUDA = Diagnosis(
    "device-hard-coded-cuda",
    "a hard-coded .cuda() / device='cuda' ignores where the inputs are",
    "Follow the inputs: .to(q.device), or device=q.device when building a tensor.", NO_QUIZ)
HARD_CODED_CPU = Diagnosis(
    "device-hard-coded-cpu",
    "a hard-coded .cpu() / device='cpu' moves data off the inputs' device",
    "Follow the inputs: keep every tensor on q.device.", NO_QUIZ)
HOST_VALUES = Diagnosis(
    "device-host-values",
    "a floating-point tensor's values are read into Python (tolist()): the computation leaves the inputs' device, "
    "and what comes back is built on the CPU",
    "Compute with torch operations on the tensors themselves: they run wherever the inputs are.", NO_QUIZ)
REFUSES_DEVICE = Diagnosis(
    "device-refused",
    "the code raises by itself when its inputs are not on the CPU: it runs on one device only",
    "Nothing in attention depends on where the inputs are: follow q.device and run the same code everywhere.",
    NO_QUIZ)
DID_NOT_FINISH = Diagnosis(
    "device-run-did-not-finish",
    "the code gives its results with inputs on the CPU but did not finish with them on another device",
    "Nothing in attention depends on where the inputs are: follow q.device and run the same code everywhere.",
    NO_QUIZ)

_MIXED = re.compile(r"is not on the expected device|Expected all tensors to be on the same device|"
                    r"Expected \w+ and \w+ to be on the same device|but got \w+ on (cpu|cuda)")
_NUMPY = re.compile(r"can't convert [\w:]+ device type tensor to numpy")
_NO_CUDA = re.compile(r"Torch not compiled with CUDA|NVIDIA driver|No CUDA GPUs are available")
_COPY_OUT = re.compile(r"Cannot copy out of meta tensor")
_CUDA_CODE = re.compile(r"\.cuda\(|['\"]cuda")
_CPU_CODE = re.compile(r"\.cpu\(|['\"]cpu['\"]")
_VALUE_READ = re.compile(r"\.(tolist|item)\(\)|\b(int|float|bool)\(")


def placement(message: str, code: str = "") -> Diagnosis | None:
    """The placement bug an error of the learner's code shows, from its message and the line
    that raised it; None for any other error."""
    if _NUMPY.search(message):
        return NUMPY
    if _NO_CUDA.search(message):
        return HARD_CODED_CUDA
    if _COPY_OUT.search(message) and _VALUE_READ.search(code):
        # Values read into Python (a block table's or lengths' .cpu().tolist(), as vLLM does) are
        # correct on every real device; a meta tensor has none to give, so this run proves nothing.
        return None
    if _MIXED.search(message) or _COPY_OUT.search(message):
        if _CUDA_CODE.search(code):
            return HARD_CODED_CUDA
        if _CPU_CODE.search(code):
            return HARD_CODED_CPU
        return WITHOUT_DEVICE
    return None
