"""The forbidden kernels' machine code, replaced by traps in the learner's process.

Why: the other guards (guards.py) live in Python objects and PyTorch's dispatcher, and learner
code that calls native code reaches around both. Two such routes forged passes: ctypes into
libtorch's exported AOTI C shims (``aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu``
calls ``at::cpu::`` and then the kernel, never the dispatcher), and the guard's dispatcher
library found by scanning the process's memory and reset. ctypes itself cannot be taken away:
torch imports it, Triton needs it, and a module object stays reachable through ``gc`` whatever
``sys.modules`` or an import hook say. What both routes must end in is the kernel's code, so
that code is overwritten before the learner's file runs:

* every function libtorch exports whose symbol names a forbidden kernel (the AOTI shims,
  ``at::cpu::``, ``at::native::``, ``at::compositeexplicitautograd::``... wrappers), whole, from
  ``.dynsym``'s sizes; the ``at::_ops::`` entry points are left alone: they only enter the
  dispatcher, where the guard's kernels answer with the friendly "write it yourself";
* the per-CPU kernels that the forbidden ``DispatchStub``\\ s point to (``flash_attention_kernel``,
  ``softmax_lastdim_kernel``...: their function pointers are exported data), whole, from the
  extent ``.eh_frame`` records for them.

The fill is ``ud2`` (x86-64) or ``udf #0`` (AArch64): a caught SIGILL that returns re-executes
the same trap, so a handler cannot step over it. The pages holding them become anonymous memory
(``madvise(MADV_DONTNEED)`` on them gives zeros, not the file's code), on a machine without a GPU
the syscall filter refuses making memory executable again (``mprotect``/``pkey_mprotect`` with
PROT_EXEC; sandbox.py) and unmapping, moving, discarding or remapping over any page of a trapped
library (syscall_policy.protect_ranges), and Landlock hides the library files themselves (the worker adds them to
what it hides), so putting the code back needs its bytes brought in by the submission and mapped
over the page. Not covered, and said in the README: a learner who maps such bytes (``mmap`` must
stay open for loading libraries), calls unexported code at addresses found by disassembling this
build of libtorch, or on a GPU machine uses ``mprotect``.
"""
from __future__ import annotations

import ctypes
import mmap
import os
import platform
import re
import struct
from typing import Any, Iterable

# The libraries whose code computes the kernels. libtorch_python is left out on purpose: its
# exported functions are Python bindings that enter the dispatcher, where the guard answers.
LIBRARY = re.compile(r"^libtorch_(cpu|cuda|hip|xpu)[^/]*\.so")
DISPATCHER_ENTRY = b"_ZN2at4_ops"  # at::_ops::<op>::call / ::redispatch
STUB = b"DispatchStub"
FILL = {"x86_64": b"\x0f\x0b", "aarch64": b"\x00\x00\x00\x00"}
SHT_DYNSYM, STT_FUNC, STT_OBJECT = 11, 2, 1
PROT_READ, PROT_WRITE, PROT_EXEC = mmap.PROT_READ, mmap.PROT_WRITE, mmap.PROT_EXEC
MAP_FIXED = 0x10


def trap_forbidden_code(parts: Iterable[str]) -> dict[str, Any]:
    """Overwrite the code of every kernel whose name holds one of `parts`, in each libtorch
    library mapped into this process. Returns what the report's environment shows."""
    parts = tuple(parts)
    fill = FILL.get(platform.machine())
    if not parts:
        return {"native_traps": "none: nothing is forbidden"}
    if fill is None:
        return {"native_traps": f"not installed: no trap instruction known for {platform.machine()}"}
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mmap.restype = ctypes.c_void_p
    functions, libraries = 0, []
    for path, base in mapped_libraries().items():
        if ctypes.string_at(base, 4) != b"\x7fELF":  # not where its first segment sits: leave it alone
            continue
        ranges = forbidden_ranges(path, base, parts)
        if ranges:
            error = _overwrite(libc, ranges, fill)
            if error:
                return {"native_traps": f"not installed: {error}"}
            functions += len(ranges)
            libraries.append(path)
    return {"native_traps": f"{functions} functions in {len(libraries)} libraries", "trapped_libraries": libraries}


def mapped_libraries(maps: str = "/proc/self/maps") -> dict[str, int]:
    """libtorch's code libraries as loaded here, each with its load address (the start of its
    mapping at file offset 0, where a shared library's first segment, at address 0, sits)."""
    found: dict[str, int] = {}
    with open(maps) as lines:
        for line in lines:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and int(fields[2], 16) == 0:
                path = fields[5].strip()
                if LIBRARY.match(os.path.basename(path)) and path not in found:
                    found[path] = int(fields[0].split("-")[0], 16)
    return found


def mapped_span(path: str, maps: str = "/proc/self/maps") -> tuple[int, int] | None:
    """[start, end) from the first to the last mapping of the library at `path`: the trapped
    pages (anonymous now) lie between."""
    starts, ends = [], []
    with open(maps) as lines:
        for line in lines:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].strip() == path:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                starts.append(start)
                ends.append(end)
    return (min(starts), max(ends)) if starts else None


def forbidden_ranges(path: str, base: int, parts: tuple[str, ...]) -> list[tuple[int, int]]:
    """(address, size) of each function to trap in the library at `path` loaded at `base`."""
    symbols, names = _dynamic_symbols(path)
    wanted = _matching_offsets(names, [part.encode() for part in parts])
    ranges, stubs = [], []
    for name, info, _other, section, value, size in struct.iter_unpack("<IBBHQQ", symbols):
        if name not in wanted or not section or not value or not size:
            continue
        kind = info & 0xF
        full = names[name:names.index(b"\0", name)]
        if kind == STT_FUNC and not full.startswith(DISPATCHER_ENTRY):
            ranges.append((base + value, size))
        elif kind == STT_OBJECT and STUB in full and size == 8:
            stubs.append(base + value)
    extents = _FunctionExtents(path, base)
    for pointer in stubs:
        target = ctypes.c_void_p.from_address(pointer).value
        size = extents.size_of(target) if target else None
        if size:
            ranges.append((target, size))
    return sorted(set(ranges))


def _dynamic_symbols(path: str) -> tuple[bytes, bytes]:
    """The raw .dynsym table and its string table (ELF64, little-endian)."""
    with open(path, "rb") as f:
        header = f.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
            return b"", b"\0"
        sections = _section_headers(f, header)
        dynsym = next((s for s in sections if s[1] == SHT_DYNSYM), None)
        if dynsym is None:
            return b"", b"\0"
        strings = sections[dynsym[6]]
        f.seek(dynsym[4])
        symbols = f.read(dynsym[5])
        f.seek(strings[4])
        return symbols, f.read(strings[5])


def _section_headers(f: Any, header: bytes) -> list[tuple[int, ...]]:
    offset, = struct.unpack_from("<Q", header, 0x28)
    size, count = struct.unpack_from("<HH", header, 0x3A)
    f.seek(offset)
    table = f.read(size * count)
    # (name, type, flags, addr, offset, size, link, info, addralign, entsize)
    return [struct.unpack_from("<IIQQQQIIQQ", table, i * size) for i in range(count)]


def _matching_offsets(names: bytes, parts: list[bytes]) -> set[int]:
    """Every string-table offset whose name (read from there to its NUL) holds a part: one
    regular-expression pass instead of slicing 75,000 names (0.65 s) in every worker."""
    offsets: set[int] = set()
    for match in re.finditer(b"|".join(re.escape(part) for part in parts), names):
        start = names.rfind(b"\0", 0, match.start()) + 1
        offsets.update(range(start, match.start() + 1))  # a suffix shared by another name starts inside
    return offsets


class _FunctionExtents:
    """Function sizes from the ``.eh_frame_hdr`` search table and the FDEs it points to, read
    from the mapped library: the stubs' kernels are not exported, so ``.dynsym`` has no size."""

    def __init__(self, path: str, base: int) -> None:
        self.hdr, self.table = 0, b""
        with open(path, "rb") as f:
            header = f.read(64)
            sections = _section_headers(f, header)
            f.seek(sections[struct.unpack_from("<H", header, 0x3E)[0]][4])
            shstrtab = f.read(1 << 20)
        for section in sections:
            if shstrtab[section[0]:shstrtab.index(b"\0", section[0])] == b".eh_frame_hdr":
                self._read(base + section[3])

    def _read(self, hdr: int) -> None:
        version, _frame_enc, count_enc, table_enc = ctypes.string_at(hdr, 4)
        # The one layout GCC and Clang write: counts as udata4, the table as datarel sdata4 pairs,
        # sorted by start. Searched in place: libtorch_cpu has hundreds of thousands of entries.
        if version != 1 or count_enc != 0x03 or table_enc != 0x3B:
            return
        count, = struct.unpack("<I", ctypes.string_at(hdr + 8, 4))
        self.hdr, self.table = hdr, ctypes.string_at(hdr + 12, 8 * count)

    def size_of(self, address: int) -> int | None:
        """The byte length of the function starting at `address`, when its FDE says so."""
        low, high = 0, len(self.table) // 8
        while low < high:
            middle = (low + high) // 2
            start, fde = struct.unpack_from("<ii", self.table, 8 * middle)
            if self.hdr + start < address:
                low = middle + 1
            elif self.hdr + start > address:
                high = middle
            else:
                fde += self.hdr
                length, cie, begin, size = struct.unpack("<IIiI", ctypes.string_at(fde, 16))
                # pc_begin is pcrel sdata4 in the FDEs these compilers write: check it lands here.
                if length == 0xFFFFFFFF or not cie or fde + 8 + begin != address:
                    return None
                return size
        return None


def _overwrite(libc: Any, ranges: list[tuple[int, int]], fill: bytes) -> str:
    """Write `fill` over each range. The pages holding them are replaced by anonymous memory with
    the same bytes, traps included, then made read-and-execute: a private file page that was only
    written to would come back from the file on ``madvise(MADV_DONTNEED)``, which the filter cannot
    refuse (glibc's allocator relies on it to zero memory), where an anonymous page comes back as
    zeros, and no code."""
    page = mmap.PAGESIZE
    spans: dict[int, int] = {}
    for address, size in ranges:
        first, last = address // page * page, (address + size + page - 1) // page * page
        spans[first] = max(spans.get(first, 0), last)
    for first, last in _merged(spans):
        content = bytearray(ctypes.string_at(first, last - first))
        for address, size in ranges:
            if first <= address < last:
                content[address - first:address - first + size] = (fill * (size // len(fill) + 1))[:size]
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_FIXED
        if libc.mmap(first, last - first, PROT_READ | PROT_WRITE, flags, -1, 0) != first:
            return f"mmap: {os.strerror(ctypes.get_errno())}"
        ctypes.memmove(first, bytes(content), last - first)
        if libc.mprotect(first, last - first, PROT_READ | PROT_EXEC) != 0:
            return f"mprotect: {os.strerror(ctypes.get_errno())}"
    return ""


def _merged(spans: dict[int, int]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for first in sorted(spans):
        if merged and first <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], spans[first])
        else:
            merged.append([first, spans[first]])
    return [(first, last) for first, last in merged]
