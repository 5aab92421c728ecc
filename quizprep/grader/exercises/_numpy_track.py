"""The NumPy track: an exercise's checks run on a learner who receives and returns np.ndarray.

The worker converts (request option ``numpy``): tensors become arrays sharing their memory
just before the learner's call, and the arrays it returns become tensors again, so every
comparison, hypothesis and diagnosis of the torch exercise applies unchanged. What cannot
apply is left out: gradients, and bfloat16 (NumPy has no such dtype).
"""
from __future__ import annotations

from typing import Any, Callable

from torch import Tensor

from quizprep.grader.context import CheckContext, Reply
from quizprep.grader.spec import Check, CheckFailure


class NumpyContext(CheckContext):
    """A CheckContext whose calls hand the learner arrays, on the CPU."""

    @classmethod
    def of(cls, ctx: CheckContext) -> "NumpyContext":
        return ctx if isinstance(ctx, NumpyContext) else cls(ctx.session, seed=ctx.seed, device="cpu")

    def reseeded(self, salt: int) -> "NumpyContext":
        return NumpyContext(self.session, seed=self.seed + salt, device="cpu")

    def call(self, target: str, *args: Any, options: dict[str, Any] | None = None, **kwargs: Any) -> Reply:
        reply = super().call(target, *args, options={**(options or {}), "numpy": True}, **kwargs)
        _expect_arrays(target, reply.value)
        return reply


def _expect_arrays(target: str, value: Any) -> None:
    """Arrays came back as tensors; a nested list, a scalar or an object did not."""
    from quizprep.grader.learner_side.protocol import kind_of

    several = isinstance(value, tuple) or (isinstance(value, list) and all(isinstance(v, Tensor) for v in value))
    for item in value if several else (value,):
        if not isinstance(item, Tensor):
            raise CheckFailure(f"{target} returned a {kind_of(item)}; the NumPy track expects np.ndarray results",
                               hint="Return arrays (np.asarray(...) if in doubt), not lists, NumPy scalars or "
                                    "Python numbers.")


def on_numpy(check: Check, title: str | None = None) -> Check:
    """The same check, with the learner handed arrays."""
    run: Callable[[CheckContext], str | None] = check.run
    return Check(check.id, title or check.title, lambda ctx: run(NumpyContext.of(ctx)))
