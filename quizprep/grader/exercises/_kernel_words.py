"""The Triton track's failures in a kernel's terms: the learner's own line for a named kernel bug,
tiles, pointers, masks and strides in place of the PyTorch exercises' masks, slices and dropout, and
output elements no program stored named for the grid or the store that left them."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

from torch import Tensor

from quizprep.grader.compare import index_ranges, indices_along, plural
from quizprep.grader.context import CheckContext
from quizprep.grader.kernel_crashes import grid_swapped
from quizprep.grader.kernel_lines import crossed_strides_line, learner_line
from quizprep.grader.lessons import lesson
from quizprep.grader.spec import CheckFailure, Diagnosis

DIMS = ("batch", "head", "query")
Check = Callable[[CheckContext], str]

KERNEL_HINTS = {
    "nan-outputs": ("A NaN in a kernel comes from exp(-inf − (-inf)) (a tile whose scores are all masked while "
                    "m is still -inf), 0/0 when ℓ stays 0, or -inf·0 inside tl.dot (K or V loaded with other=-inf): "
                    "mask scores to -inf but load K and V with other=0.0."),
    "low-precision": ("Keep tl.dot's inputs in the input dtype and accumulate in float32 (input_precision=\"ieee\" "
                      "for float32 inputs); with no cast, a key tile left out or read twice is as small as rounding: "
                      "check the loop bounds and the tile masks."),
    "some-rows-wrong": ("Look at the query tile those rows fall in: its row offsets (program_id(0) · BLOCK_M + "
                        "tl.arange), the masks of its loads and its store, and where its key loop starts and stops."),
    "some-heads-wrong": ("Check each pointer's batch and head offset (b · stride_b + h · stride_h, from that "
                         "tensor's own strides) and how program_id(1) splits into b = bh // H and h = bh % H."),
}
GENERAL_NAMES = {"", "some-heads-wrong", "some-rows-wrong", "dropout-active", "nan-outputs", "low-precision"}
NONDETERMINISTIC = Diagnosis(
    "triton-nondeterministic", "two launches with the same inputs return different outputs: the kernel reads memory "
    "it never loaded or wrote (a load past n without its mask, an element no program stores, a pointer into another "
    "tensor)", "Mask every tl.load and tl.store at the ragged edge, give each program its own (query tile, "
    "batch·head), and build every pointer from its own tensor's strides.", lesson("triton-ragged-edges"))
UNWRITTEN = Diagnosis(
    "triton-unwritten-output", "some elements of out are never stored by any program of the launch: the grid "
    "misses some (query tile, batch·head) pairs, or the store's mask drops rows it should keep",
    "Launch one program per query tile and batch·head (grid = (triton.cdiv(N, BLOCK_M), B * H)) and store every "
    "row of each tile below n: tl.store(out_ptrs, acc, mask=offs_m[:, None] < N).", lesson("triton-tile-sram"))


def unwritten_failure(tried: str, sizes: dict[str, int], holes: Tensor, grid: tuple[int, ...]) -> CheckFailure:
    """out has elements no program stored: they hold whatever torch.empty left there, so the
    numbers say nothing; the grid and the store say what went wrong."""
    named = grid_swapped(grid, sizes["batch"], sizes["heads"], sizes["n"]) or UNWRITTEN
    missing = [f"{plural(axis)} {index_ranges(indices_along(holes, i))}" for i, axis in enumerate(DIMS)
               if holes.dim() == len(DIMS) + 1]
    where = (f"{int(holes.sum())} of {holes.numel()} elements of out were never stored by any program "
             f"(grid {grid})" + "".join(f"; {words}" for words in missing))
    return CheckFailure(named.title, tried=tried, where=where, named=named)


def in_kernel_words(failure: CheckFailure, wrong_strides: Diagnosis, source: Path | None = None) -> None:
    """A general name said in a kernel's words; one the learner's file explains (a tensor read
    through another's strides) renamed for that cause."""
    crossed = crossed_strides_line(source) if source and failure.diagnosis_id in GENERAL_NAMES else None
    named = wrong_strides if crossed is not None else NONDETERMINISTIC if failure.diagnosis_id == "dropout-active" \
        else None
    if named is not None:
        failure.diagnosis, failure.hint, failure.quiz, failure.diagnosis_id = (named.title, named.hint, named.quiz,
                                                                               named.id)
    elif failure.diagnosis_id in KERNEL_HINTS:
        failure.hint = KERNEL_HINTS[failure.diagnosis_id]


def kernel_terms(wrong_strides: Diagnosis) -> Callable[[Check], Check]:
    """A check whose failures are said in a kernel's terms, a named one pointing at the line of the
    learner's file it most likely lives on."""
    def decorate(check: Check) -> Check:
        @functools.wraps(check)
        def in_terms(ctx: CheckContext) -> str:
            try:
                return check(ctx)
            except CheckFailure as failure:
                path = getattr(getattr(ctx, "session", None), "path", None)
                source = path if isinstance(path, Path) else None
                in_kernel_words(failure, wrong_strides, source)
                found = learner_line(source, failure.diagnosis_id) if source else None
                if source and found:
                    line = f"the line it most likely lives on: {source.name}:{found[0]}: {found[1]}"
                    failure.where = "\n".join(filter(None, (failure.where, line)))
                raise

        return in_terms

    return decorate
