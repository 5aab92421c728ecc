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

from quizprep.grader.spec import ExerciseSpec


class UnknownExercise(LookupError):
    pass


def available() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))


def load_spec(name: str) -> ExerciseSpec:
    module_name = name.replace("-", "_")
    if module_name not in available():
        raise UnknownExercise(f"unknown exercise {name!r}; choose from: {', '.join(available())}")
    module = importlib.import_module(f"{__name__}.{module_name}")
    return module.SPEC
