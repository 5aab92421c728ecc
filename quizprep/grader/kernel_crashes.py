"""What a crash inside a Triton kernel says about the kernel: Triton missing, block pointers on a
Triton without them, loads and stores past every tensor of the launch (read against the learner's
own file where the message alone cannot tell the cause), and a launch grid with its axes swapped.
"""
from __future__ import annotations

import re
from pathlib import Path

from quizprep.grader.kernel_lines import crossed_strides_line, stale_mask
from quizprep.grader.lessons import lesson
from quizprep.grader.output import Frame
from quizprep.grader.spec import Diagnosis


def missing_triton(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    if "No module named 'triton'" not in message:
        return None
    return Diagnosis("", "Triton is not installed",
                     "This exercise needs Triton (Linux): pip install 'quizprep[triton]'. No GPU is needed: "
                     "without one the grader runs your kernel through Triton's interpreter.", "")


def block_pointers(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    """Triton 3.9 removed tl.make_block_ptr (older tutorials use it); its interpreter says so only as
    a NotImplementedError from inside the launch."""
    if "Block pointers have been removed" not in message:
        return None
    return Diagnosis("triton-block-ptr", "tl.make_block_ptr: Triton 3.9 removed block pointers (its interpreter "
                     "raises NotImplementedError for them)",
                     "Address the tiles with pointer arithmetic (base + rows[:, None] * stride_n + cols[None, :] * "
                     "stride_d, masked at the ragged edge) or with tl.make_tensor_descriptor.",
                     lesson("triton-strides"))


OUT_OF_BOUNDS_LOAD = "tl.load reads outside every tensor passed to the kernel"


def kernel_out_of_bounds(message: str, code: str, frames: list[Frame]) -> Diagnosis | None:
    """An interpreted tl.load/tl.store past every tensor of its launch (learner_side/launches.py):
    a store with no mask, or a grid whose first axis counts batch·heads while the query tiles
    are on the second, else the address arithmetic itself."""
    if "outside every tensor passed to the kernel" not in message:
        return None
    grid = re.search(r"of grid \((\d+), (\d+), (\d+)\)", message)
    shape = re.search(r"tensors \((\d+), (\d+), (\d+), \d+\)", message)
    if "unmasked tl.store" in message:
        return Diagnosis("triton-unmasked-store", "a tl.store without a mask writes past the output: the last query "
                         "tile's rows beyond n land outside it (or over the next head's rows)",
                         "Store with the rows' mask: tl.store(ptrs, acc, mask=offs_m[:, None] < N).",
                         lesson("triton-ragged-edges"))
    if grid and shape:
        batch, heads, n = (int(size) for size in shape.groups())
        swapped = grid_swapped((int(grid[1]), int(grid[2])), batch, heads, n)
        if swapped is not None:
            return swapped
    return Diagnosis("triton-out-of-bounds", "a pointer offset reaches past the tensor it reads or writes",
                     "Check this line's offsets: every stride from the right tensor, program ids within the grid, "
                     "and a mask wherever a tile can run past n.", lesson("triton-strides"))


def stray_pointer(message: str, frames: list[Frame], source: Path | None) -> Diagnosis | None:
    """A load past every tensor, read from the learner's file (`source`, the grader's own path to it:
    a frame's file name comes from the learner's process): a pointer built from another tensor's
    strides, or a key-loop mask computed once before the loop (it stays the first tile's)."""
    if OUT_OF_BOUNDS_LOAD not in message or source is None or not frames or Path(frames[-1].file) != source:
        return None
    crossed = crossed_strides_line(source)
    if crossed is not None:
        return Diagnosis("triton-wrong-strides", "a pointer is built from another tensor's strides (line "
                         f"{crossed[0]}: {crossed[1]}), so it walks past the tensor it reads",
                         "Build each tensor's pointers from its own four strides (q's from stride_q*, K's from "
                         "stride_k*, V's from stride_v*), and pass each tensor's .stride() separately.",
                         lesson("triton-strides"))
    if "masked tl.load" in message and stale_mask(source, frames[-1].line, frames[-1].code):
        return Diagnosis("triton-ragged-edge", "the key tile's load mask is computed once, before the loop: it stays "
                         "the first tile's, so the last tile reads past n and its phantom keys join the softmax",
                         "Compute the mask inside the loop from the tile's own columns, (start_n + offs_n) < N, and "
                         "mask the scores there with -inf too.", lesson("triton-ragged-edges"))
    return None


def grid_swapped(grid: tuple[int, ...], batch: int, heads: int, n: int) -> Diagnosis | None:
    """A launch grid whose first axis counts batch·heads and whose second counts query tiles (of
    any power-of-two tile from 16 to 128): the kernel's program ids then read each other's role."""
    if len(grid) < 2:
        return None
    first, second = grid[0], grid[1]
    tiles = {-(-n // block) for block in (16, 32, 64, 128)}
    if first != batch * heads or second not in tiles or second == first:
        return None
    return Diagnosis("triton-grid-swapped", f"the launch grid ({first}, {second}, …) puts batch·heads on axis 0 "
                     "and the query tiles on axis 1, while the kernel reads them the other way round",
                     "Launch grid = (triton.cdiv(N, BLOCK_M), B * H) when the kernel reads the query tile from "
                     "tl.program_id(0) and batch·head from tl.program_id(1) (or swap both).",
                     lesson("triton-tile-sram"))
