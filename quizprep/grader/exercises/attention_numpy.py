"""Checks for exercises/attention_numpy.py: attention in NumPy, graded as the torch exercise."""
from __future__ import annotations

import numpy as np  # noqa: F401 - the track's dependency, imported here so a missing NumPy fails early
import torch

from quizprep.grader.context import CheckContext
from quizprep.grader.exercises import attention
from quizprep.grader.exercises._numpy_track import NumpyContext, on_numpy
from quizprep.grader.problem import verify
from quizprep.grader.spec import Check, ExerciseSpec

LEFT_OUT = {"gradients", "dtypes"}


def check_dtypes(ctx: CheckContext) -> str:
    ctx = NumpyContext.of(ctx)
    for i, dtype in enumerate((torch.float64, torch.float32, torch.float16)):
        case, actual = verify(ctx, attention.PROBLEM, attention.case_sizes((2, 2), 5, 6, 8, 4),
                              {"dtype": dtype, "mask": "random"}, ctx.seed + 40 + i)
        for name, tensor in actual.items():
            attention.expect_dtype_and_device(ctx, name, tensor, dtype, case.label)
    return "float64, float32, float16"


# The real-world use each check stands for: the torch exercise's, on arrays.
USAGE = {**attention.USAGE, "dtypes": "float64, float32 and float16 arrays (NumPy has no bfloat16)"}

SPEC = ExerciseSpec(
    name="attention-numpy",
    title="Scaled dot-product attention in NumPy",
    numpy_track=True,
    entry_points=attention.SPEC.entry_points,
    lessons=attention.SPEC.lessons,  # graded as attention: the same mistakes, the same questions
    forbidden=attention.SPEC.forbidden,  # and any torch at all in a call (Guards.numpy_only)
    mask_layout=attention.SPEC.mask_layout,
    checks=tuple(on_numpy(check) for check in attention.SPEC.checks if check.id not in LEFT_OUT)
    + (Check("dtypes", "dtypes: output matches the input (NumPy has no bfloat16)", check_dtypes),),
)
