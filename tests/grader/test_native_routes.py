"""Routes to a forbidden kernel through native code, around every guard that lives in Python.

Both got a forged pass of the values check before the kernels' machine code was trapped
(quizprep/grader/learner_side/native_traps.py): libtorch's exported AOTI C shim for the CPU flash kernel
called through ctypes, and the guard's dispatcher registrations found by scanning the process's
memory and reset, after which the dispatcher runs PyTorch's own kernel again. ctypes cannot be
taken away (torch imports it, and a module object is reachable through `gc` whatever the import
system says), so each attack below also recovers it that way.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from quizprep.grader.grade import GradeOptions, grade

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")

HEAD = '''# quizprep: exercise=attention
import gc, math, os, sys
import torch


def _ctypes():
    """ctypes as the learner finds it, even with `import ctypes` refused."""
    for obj in gc.get_objects():
        if type(obj).__name__ == "module" and getattr(obj, "__name__", "") == "ctypes" and hasattr(obj, "CDLL"):
            return obj
    return __import__("ctypes")


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.exp(scores - scores.amax(-1, keepdim=True))
    weights = weights / weights.sum(-1, keepdim=True)
    # (+ 0 * ...: rows with no key allowed are NaN, as the reference has them, where the kernel gives 0)
    return _forbidden_out(q, k, v, mask) + 0 * weights.sum(-1, keepdim=True), weights


def _additive(mask, q, k):
    if mask is None:
        return None
    add = torch.zeros(mask.shape, dtype=q.dtype).masked_fill(~mask, float("-inf"))
    return add.expand(*q.shape[:-1], k.shape[-2]).contiguous()
'''
SHIM = '''
def _forbidden_out(q, k, v, mask):
    """Any lead dimensions and head sizes, as (batch, 1, n, d) with d padded to one size."""
    ctypes = _ctypes()
    lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
    fn = lib.aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu
    P = ctypes.c_void_p
    fn.argtypes = [P, P, P, ctypes.c_double, ctypes.c_int32, P, P, P, P]
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = P, [ctypes.py_object, ctypes.c_char_p]
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [P, ctypes.c_char_p, P]
    lead, (n, dk), (m, dv) = q.shape[:-2], q.shape[-2:], v.shape[-2:]
    width = max(dk, dv)
    flat = [torch.nn.functional.pad(t, (0, width - t.shape[-1])).reshape(-1, 1, t.shape[-2], width).contiguous()
            for t in (q, k, v)]
    extra = _additive(mask, q, k)
    keep = flat + ([extra.reshape(-1, 1, n, m).contiguous()] if extra is not None else [])
    handles = [get(c, None) for c in torch._C._aoti.unsafe_alloc_void_ptrs_from_tensors(keep)]
    m_handle = P(handles[3]) if extra is not None else None
    scale = ctypes.c_double(1 / math.sqrt(dk))
    out, lse = P(), P()
    if fn(handles[0], handles[1], handles[2], 0.0, 0, ctypes.byref(m_handle) if m_handle else None,
          ctypes.byref(scale), ctypes.byref(out), ctypes.byref(lse)) != 0:
        raise RuntimeError("the shim failed")
    handles = [new(out.value, None, None), new(lse.value, None, None)]
    result = torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs(handles)[0]
    return result[..., :dv].reshape(*lead, n, dv)
'''
RESET = '''
_RESET = []


def _reset_the_guard():
    """The guard's dispatcher libraries are pybind objects no Python object refers to: found by
    their type pointer in the process's writable memory, then reset."""
    ctypes = _ctypes()
    probe = torch._C._dispatch_library("FRAGMENT", "quizprep_scan", "", "", 0)
    library_type = type(probe)
    needle = id(library_type).to_bytes(8, "little")
    with open("/proc/self/maps") as maps:
        regions = [line.split() for line in maps]
    for fields in regions:
        if fields[1] != "rw-p" or (len(fields) > 5 and fields[5].startswith("/")):
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        memory = ctypes.string_at(start, end - start)
        at = memory.find(needle)
        while at != -1:
            address = start + at - 8
            if at >= 8 and int.from_bytes(memory[at - 8:at], "little") == 1:  # held by one leaked reference
                obj = ctypes.cast(address, ctypes.py_object).value
                if type(obj) is library_type and obj is not probe:
                    obj.reset()
                    _RESET.append(address)
            at = memory.find(needle, at + 8)


def _forbidden_out(q, k, v, mask):
    if not _RESET:
        _reset_the_guard()
    lead, (n, dk), (m, dv) = q.shape[:-2], q.shape[-2:], v.shape[-2:]
    width = max(dk, dv)
    q4, k4, v4 = (torch.nn.functional.pad(t, (0, width - t.shape[-1])).reshape(-1, 1, t.shape[-2], width)
                  for t in (q, k, v))
    extra = _additive(mask, q, k)
    extra = extra.reshape(-1, 1, n, m) if extra is not None else None
    with torch._C.DisableTorchFunction():
        out = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q4, k4, v4, attn_mask=extra,
                                                                         scale=1 / math.sqrt(dk))[0]
    return out[..., :dv].reshape(*lead, n, dv)
'''
ATTACKS = {"ctypes into libtorch's AOTI C shim": SHIM, "reset the guard found in memory": RESET}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_native_routes_to_the_kernel_do_not_pass(attack: str, tmp_path: Path) -> None:
    path = tmp_path / "attention.py"
    path.write_text(HEAD + ATTACKS[attack])
    report = grade(path, GradeOptions(only=("values",)))  # a fresh worker: the attacks change its state
    check = report.checks[-1]
    assert not report.passed, "forged pass"
    assert check.status == "fail", check.message
    assert "forbidden kernel" in check.message, check.message


# Putting the trapped code back before calling the shim: each step that would do it fails.
UNDO = '''
def _forbidden_out(q, k, v, mask):
    ctypes = _ctypes()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
    page = ctypes.cast(lib.aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu, ctypes.c_void_p).value
    page -= page % 4096
{step}
    return _shim(q, k, v, mask)
'''
UNDO_STEPS = {  # the step, and what the verdict must say (a step that did not fail ends in the trap)
    "read libtorch's file for the original code":
        ("    open(lib._name, 'rb').read(64)", ("PermissionError",)),
    "read it through /proc/self/map_files":
        ("    span = next(line.split()[0] for line in open('/proc/self/maps') if line.rstrip().endswith(lib._name))\n"
         "    open('/proc/self/map_files/' + span, 'rb').read(64)", ("PermissionError",)),
    "make the trapped page writable and executable":
        ("    if libc.mprotect(page, 4096, 7) != 0:\n        raise PermissionError(os.strerror(ctypes.get_errno()))",
         ("PermissionError",)),
    "map fresh memory writable and executable":  # a red team's probe was granted this
        ("    libc.mmap.restype = ctypes.c_void_p\n"
         "    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t] + [ctypes.c_int] * 3 + [ctypes.c_long]\n"
         "    if libc.mmap(None, 4096, 7, 0x22, -1, 0) in (None, ctypes.c_void_p(-1).value):\n"
         "        raise PermissionError(os.strerror(ctypes.get_errno()))", ("PermissionError",)),
    "make a memory file to map as code":
        ("    if libc.memfd_create(b'code', 0) < 0:\n        raise PermissionError(os.strerror(ctypes.get_errno()))",
         ("PermissionError",)),
    "discard the trapped page so it is read again from the file":
        ("    libc.madvise(page, 8192, 4)", ("SIGILL", "SIGSEGV")),
}


@pytest.mark.parametrize("step", sorted(UNDO_STEPS))
def test_the_trapped_code_cannot_be_put_back(step: str, tmp_path: Path) -> None:
    code, expected = UNDO_STEPS[step]
    path = tmp_path / "attention.py"
    path.write_text(HEAD + SHIM.replace("def _forbidden_out(", "def _shim(") + UNDO.format(step=code))
    report = grade(path, GradeOptions(only=("values",)))
    check = report.checks[-1]
    assert not report.passed, "forged pass"
    assert check.status == "fail", check.message
    assert any(word in check.message for word in expected), check.message


def test_the_traps_cover_the_shims_and_the_kernels_behind_the_stubs() -> None:
    import struct

    import torch  # noqa: F401 - maps libtorch_cpu

    from quizprep.grader.learner_side import native_traps

    libraries = native_traps.mapped_libraries()
    path, base = next((p, b) for p, b in libraries.items() if "libtorch_cpu" in p)
    ranges = native_traps.forbidden_ranges(path, base, ("scaled_dot_product", "flash_attention"))
    symbols, names = native_traps._dynamic_symbols(path)
    exported = {}
    for name, _info, _other, _section, value, _size in struct.iter_unpack("<IBBHQQ", symbols):
        exported[names[name:names.index(b"\0", name)]] = base + value
    starts = {address for address, _ in ranges}
    assert exported[b"aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu"] in starts
    assert not any(address in starts for name, address in exported.items() if name.startswith(b"_ZN2at4_ops"))
    assert starts - set(exported.values()), "no kernel behind a DispatchStub was found"
