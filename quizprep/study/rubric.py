"""A free answer's rubric self-assessment, scored: the share of the weight met, the FSRS rating
it gives and whether it passes, and the marks stored for it."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from quizprep.bank.model import FreeQuestion
from quizprep.study.showing import InputError

if TYPE_CHECKING:
    from fsrs import Rating


def rubric_verdict(question: FreeQuestion, met: Sequence[bool]) -> tuple[float, Rating, bool]:
    """Score (met weight / total weight), rating and pass of a rubric self-assessment."""
    from quizprep.study.scheduling import PASS_SCORE, rating_for_score

    if len(met) != len(question.rubric):
        raise InputError(f"the rubric has {len(question.rubric)} items, got {len(met)} marks")
    score = sum(item.weight for item, ok in zip(question.rubric, met) if ok) / question.total_weight
    return score, rating_for_score(score), score >= PASS_SCORE


def rubric_marks(question: FreeQuestion, met: Sequence[bool]) -> list[tuple[str, float, bool]]:
    """What the store keeps of an assessment: (criterion, weight, met) in rubric order."""
    return [(item.criterion, item.weight, bool(ok)) for item, ok in zip(question.rubric, met)]
