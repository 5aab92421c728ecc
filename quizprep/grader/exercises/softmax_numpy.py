"""Checks for exercises/softmax_numpy.py: a stable softmax in NumPy, graded as the torch exercise."""
from __future__ import annotations

import numpy as np  # noqa: F401 - the track's dependency, imported here so a missing NumPy fails early
import torch

from quizprep.grader.context import CheckContext
from quizprep.grader.exercises import softmax
from quizprep.grader.exercises._numpy_track import NumpyContext, on_numpy
from quizprep.grader.problem import verify
from quizprep.grader.spec import Check, ExerciseSpec

LEFT_OUT = {"gradients", "dtypes"}


def check_dtypes(ctx: CheckContext) -> str:
    ctx = NumpyContext.of(ctx)
    for i, dtype in enumerate((torch.float64, torch.float32, torch.float16)):
        case, actual = verify(ctx, softmax.PROBLEM, {"d0": 3, "d1": 5}, {"dtype": dtype}, ctx.seed + 30 + i)
        softmax._expect_dtype(actual["out"], dtype, case.label)
    return "float64, float32, float16"


# The real-world use each check stands for: the torch exercise's, on arrays.
USAGE = {**softmax.USAGE, "dtypes": "float64, float32 and float16 arrays (NumPy has no bfloat16)"}

SPEC = ExerciseSpec(
    name="softmax-numpy",
    title="Numerically stable softmax in NumPy",
    numpy_track=True,
    entry_points=softmax.SPEC.entry_points,
    lessons=softmax.SPEC.lessons,  # graded as softmax: the same mistakes, the same questions
    forbidden=softmax.SPEC.forbidden,  # and any torch at all in a call (Guards.numpy_only)
    checks=tuple(on_numpy(check) for check in softmax.SPEC.checks if check.id not in LEFT_OUT)
    + (Check("dtypes", "dtypes: output matches the input (NumPy has no bfloat16)", check_dtypes),),
)
