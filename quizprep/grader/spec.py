"""What an exercise is, to the grader: the interface every exercise module implements.

An exercise lives in ``quizprep/grader/exercises/<name>.py`` and defines a module-level
``SPEC = ExerciseSpec(...)``. :func:`quizprep.grader.exercises.load_spec` finds it by name,
so adding an exercise means adding one module (and its stub in ``exercises/<name>.py``).

A check is a function ``run(ctx: CheckContext) -> str | None``. It asks the learner's
process for results with ``ctx.call`` / ``ctx.new_module`` (each reply holds decoded tensors,
never objects from the learner), compares them in the grader's process, and reports a failure
by raising :class:`CheckFailure` (or lets a :class:`~quizprep.grader.failures.LearnerFailure`
propagate: the runner turns it into a failed check). It returns an optional note for the report.

The perf phase (issue 5) plugs in through ``ExerciseSpec.perf``: a callable taking the
:class:`CheckContext` after every check has passed (same worker process, same seed and device)
and returning a :class:`PhaseResult`; the runner adds its checks to the report and its
``data`` under ``report["perf"]`` in ``--json``. Exercises without timing leave it None.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from quizprep.grader.compare import Mismatch
    from quizprep.grader.context import CheckContext


@dataclass(frozen=True)
class Diagnosis:
    """A named cause of wrong outputs, with what to do about it and the question that teaches it."""

    id: str
    title: str
    hint: str
    quiz: str


@dataclass
class CheckFailure(Exception):
    """A check's verdict that the learner's code is wrong, with everything the report shows."""

    message: str
    tried: str = ""
    smallest: str = ""
    where: str = ""  # what no Mismatch says: shown after the mismatches
    diagnosis: str = ""
    hint: str = ""
    quiz: str = ""
    traceback: list[str] = field(default_factory=list)
    output: str = ""
    diagnosis_id: str = ""
    mismatches: list[Mismatch] = field(default_factory=list)  # where the outputs differ, as numbers
    named: Diagnosis | None = None  # the mistake that explains it: its words fill the fields left empty

    def __post_init__(self) -> None:
        if self.named is not None:
            self.diagnosis = self.diagnosis or self.named.title
            self.hint = self.hint or self.named.hint
            self.quiz = self.quiz or self.named.quiz
            self.diagnosis_id = self.diagnosis_id or self.named.id

    def __str__(self) -> str:
        return self.message

    def located(self) -> str:
        """Where it went wrong, rendered once for every report: each mismatch, then any other words."""
        words = [self.where] if self.where else []
        return "\n".join([*(mismatch.describe() for mismatch in self.mismatches), *words])


class CheckSkipped(Exception):
    """The check does not apply here (e.g. it needs CUDA); the message says why."""


class Word(str, Enum):
    """A closed set of words: each member is a str, so JSON writes its value and it equals its value
    ("pass"); str() and f-strings give the value too (Enum's own would give "Status.PASS")."""

    def __str__(self) -> str:
        return str(self.value)


class Status(Word):
    """A check's verdict."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"  # the grader itself failed, not the learner's code


class FailureKind(Word):
    """Why the learner's code gave no result (a LearnerFailure's kind)."""

    NOT_IMPLEMENTED = "not_implemented"
    SYNTAX = "syntax"
    EXCEPTION = "exception"
    FORBIDDEN = "forbidden"
    MEMORY = "memory"
    EXIT = "exit"
    CRASH = "crash"
    TIMEOUT = "timeout"
    RESOURCES = "resources"
    LOAD = "load"
    PROTOCOL = "protocol"

    @classmethod
    def from_worker(cls, word: object) -> FailureKind:
        """The kind an error in a worker's reply names. The learner's process can send any text, and
        only the grader may say that code timed out or crashed: anything else is an exception."""
        return cls(word) if isinstance(word, str) and word in WORKER_REPORTED else cls.EXCEPTION


# What the worker itself tells apart (learner_side/errors.py); the grader sees the rest from outside.
WORKER_REPORTED = (FailureKind.NOT_IMPLEMENTED, FailureKind.SYNTAX, FailureKind.EXCEPTION, FailureKind.FORBIDDEN,
                   FailureKind.MEMORY, FailureKind.EXIT)


# Metadata of the CheckResult fields the grader reads but the reports leave out: the JSON, text and
# Exercism output of a grade stays what it was.
NOT_REPORTED = {"reported": False}


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    run: Callable[[CheckContext], str | None]
    # Run again by the device check's placement probe. A memory check is not: its calls take the
    # paths of the checks before it, at the size only its audit needs, whose reference a probe would
    # build again for nothing (a test holds it to taking no path of its own).
    probed: bool = True


@dataclass
class CheckResult:
    id: str
    title: str
    status: Status
    message: str = ""
    diagnosis: str = ""
    hint: str = ""
    quiz: str = ""
    tried: str = ""
    smallest: str = ""
    where: str = ""
    traceback: list[str] = field(default_factory=list)
    output: str = ""
    seconds: float = 0.0
    diagnosis_id: str = ""
    cause: str = ""  # failures with the same cause share one panel: a diagnosis id or the error itself
    # Why the learner's code gave no result; None when it gave one.
    failure_kind: FailureKind | None = field(default=None, metadata=NOT_REPORTED)
    failing_code: str = field(default="", metadata=NOT_REPORTED)  # the learner's line that raised, if any
    mismatches: list[Mismatch] = field(default_factory=list, metadata=NOT_REPORTED)  # `where`, as numbers
    test_code: str = ""  # the calls the check made into the learner's code, as code (calls.py)
    targets: list[str] = field(default_factory=list, metadata=NOT_REPORTED)  # the entry points those calls reached

    def __post_init__(self) -> None:
        self.status = Status(self.status)  # a plain "pass" becomes Status.PASS
        if self.failure_kind is not None:
            self.failure_kind = FailureKind(self.failure_kind)


@dataclass
class PhaseResult:
    """What an extra phase (perf) adds to a report: more check rows and free-form data."""

    checks: list[CheckResult] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ExerciseSpec:
    name: str
    title: str
    entry_points: tuple[str, ...]
    # The quiz questions behind the mistakes the checks name: due for review after a failed grade,
    # good after a passing one.
    lessons: tuple[str, ...]
    checks: tuple[Check, ...]
    forbidden: tuple[str, ...] = ()  # guard groups in worker.py: "sdpa", "mha", "softmax", "autograd"
    mask_layout: str = ""  # the masks the checks pass, named when a broadcast fails
    # The exercise's own crash rules (crashes.CrashRule), read before the general ones.
    crash_causes: tuple[Callable[..., Diagnosis | None], ...] = ()
    numpy_track: bool = False  # the learner gets NumPy arrays, so every call runs on the CPU
    # Triton kernels: compiled on a GPU, so the checks run there when there is one; interpreted on
    # the CPU otherwise. A kernel cannot run on the meta device, so there is no placement probe.
    gpu_kernels: bool = False
    perf: Callable[[CheckContext], PhaseResult] | None = None
    # Judges every call of the learner's function with the grader's audit on (ctx, request, response):
    # a streaming exercise audited at one check only passed a file that streamed at that check's
    # size alone, or only while it saw the audit's slowdown (eighth red team).
    every_call: Callable[[CheckContext, dict[str, Any], dict[str, Any]], None] | None = None

    @property
    def worker_warm_up(self) -> bool:
        """Whether its worker runs torch's first gradient and first meta-device op as it starts
        (seconds): the NumPy track takes no gradient and, like a kernel track, has no meta probe."""
        return not (self.numpy_track or self.gpu_kernels)
