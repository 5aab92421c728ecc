"""A free answer's rubric self-assessment, scored: the share of the weight met, the FSRS rating
it gives and whether it passes, and the marks stored for it; and committed to the store."""
from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Sequence

from quizprep.bank.model import FreeQuestion
from quizprep.study.showing import Feedback, InputError, PendingAssessment

if TYPE_CHECKING:
    from fsrs import Card, Rating

    from quizprep.study.store import Store


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


def assess_answer(store: Store, pending: PendingAssessment, met: Sequence[bool], now: datetime, *,
                  schedule: bool = True) -> Feedback:
    """Commit a rubric self-assessment (also for answers left unassessed by an earlier run);
    `schedule=False` (cram) records it without reviewing the question's card."""
    question = pending.question
    score, rating, correct = rubric_verdict(question, met)
    card = store.record_assessment(pending.answer_id, rubric_marks(question, met), score=score, correct=correct,
                                   rating=rating if schedule else None, assessed_at=now)
    return Feedback(pending.showing, pending.answer_id, pending.response, correct, score, rating,
                    pending.elapsed_s, False, due_after(store, question.id, card, now),
                    rubric_met=tuple(bool(ok) for ok in met))


def due_after(store: Store, question_id: str, card: Card | None, answered_at: datetime) -> datetime:
    """When the question is next due: from the card just reviewed, else (cram, which reviews
    none) from its current card; a question never scheduled counts as due now."""
    card = card or store.card(question_id)
    return card.due if card else answered_at
