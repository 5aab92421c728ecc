"""Exercise specs, one module per exercise, found by name.

To add an exercise ``foo``: write the learner's stub ``exercises/foo.py`` (contract in the
docstring, body raising NotImplementedError), a hidden example solution in
``tests/solutions/foo.py``, and ``quizprep/grader/exercises/foo.py`` defining
``SPEC = ExerciseSpec(name="foo", ...)`` (see :mod:`quizprep.grader.spec`), its ``lessons`` the
quiz questions behind the mistakes its checks name. Nothing else needs registering:
``quizprep grade --exercise foo`` and ``# quizprep: exercise=foo`` find it.

A name is its module's name; ``-`` and ``_`` are interchangeable in it, so the NumPy track's
``attention-numpy`` is ``attention_numpy.py``, as is the stub's file name.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

from quizprep.grader.spec import ExerciseSpec
from quizprep.grader.submission_file import SOURCE_BYTES, source_text

EXERCISE_LINE = re.compile(r"^#\s*quizprep:\s*exercise\s*=\s*([\w-]+)", re.MULTILINE)
# The tracks whose checks take no gradient and run nothing on the meta device, so their worker
# skips torch's warm-ups (ExerciseSpec.worker_warm_up). Named here, where torch is not imported:
# `quizprep grade FILE` launches its worker before the grader imports torch and the spec.
# The tracks whose checks run on the GPU where there is one (ExerciseSpec.gpu_kernels), named here
# for the same reason: every other exercise's checks run on the CPU under --device auto, GPU or not.
CHECKED_ON_GPU = frozenset({"flash_triton"})
NUMPY_TRACKS = frozenset({"attention_numpy", "softmax_numpy"})  # ExerciseSpec.numpy_track
WITHOUT_WARM_UPS = NUMPY_TRACKS | CHECKED_ON_GPU


class UnknownExercise(LookupError):
    pass


def available() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))


def exercise_for(path: Path, explicit: str | None) -> str:
    """--exercise, else a `# quizprep: exercise=NAME` line, else the file's stem."""
    if explicit:
        return explicit
    match = EXERCISE_LINE.search(source_text(path, SOURCE_BYTES))
    return match.group(1) if match else path.stem


def warms_up(name: str) -> bool:
    """Whether the worker for exercise `name` runs torch's warm-ups, known without importing torch."""
    return name.replace("-", "_") not in WITHOUT_WARM_UPS


def checked_on_gpu(name: str) -> bool:
    """Whether exercise `name`'s checks run on a GPU where there is one, known without importing torch."""
    return name.replace("-", "_") in CHECKED_ON_GPU


def probed_on_gpu(name: str) -> bool:
    """Whether exercise `name`'s device check runs its code on a GPU where there is one (under
    --device auto: every track but NumPy's, and the kernel tracks, checked there already), known
    without importing torch."""
    key = name.replace("-", "_")
    return key not in NUMPY_TRACKS and key not in CHECKED_ON_GPU


def load_spec(name: str) -> ExerciseSpec:
    module_name = name.replace("-", "_")
    if module_name not in available():
        raise UnknownExercise(f"unknown exercise {name!r}; choose from: {', '.join(available())}")
    module = importlib.import_module(f"{__name__}.{module_name}")
    return module.SPEC
