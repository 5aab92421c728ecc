"""Surface features of a choice question's options that tell right from wrong without the
subject: warnings of `quizprep check` (errors with `--strict`), beside the length cues of
`quizprep.bank.cues` and `quizprep.bank.length_ranks`.

- Final punctuation: when every correct option ends one way and every wrong one another ("It
  keeps the row sum" against "It is applied after the softmax."), the stop is the key.
- Opening words: when the options of one side, two or more of them, all open with the same
  words and no option of the other side does (three "Yes: …" against one "No: …", two "The
  right elements …" against one "The wrong elements …"), the odd one out is the key.
- Over all the questions checked, the option that opens differently from all the others (the
  odd one out, with at least two others alike) must not be correct more often than chance:
  a test-wise candidate who learns that "the odd one out is right" wins otherwise, even where no
  single question separates right from wrong (a select-all question)."""
from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Iterator

from quizprep.bank.length_ranks import MARGIN_OVER_CHANCE, MAX_LUCK
from quizprep.bank.model import BankError, Choice, ChoiceQuestion, Question

OPENING_WORDS = 3  # openings of one, two and three words are compared
_FINAL_MARKS = ".!?;:…"
_EDGE_PUNCTUATION = re.compile(r"^[^\w−+-]+|[^\w]+$")


def final_mark(text: str) -> str:
    """The option's final punctuation mark ("." "?" "…"), or "" when it ends without one."""
    last = text.rstrip()[-1:]
    return last if last and last in _FINAL_MARKS else ""


def opening(text: str, words: int) -> tuple[str, ...]:
    """The option's first `words` words, lower-cased, without the punctuation around them:
    "Yes: it is exact" opens with ("yes",), then ("yes", "it")."""
    tokens = (_EDGE_PUNCTUATION.sub("", token).lower() for token in text.split())
    return tuple(token for token in tokens if token)[:words]


def surface_cues(question: ChoiceQuestion) -> Iterator[BankError]:
    """A warning when the final punctuation, or the opening words, separate the question's
    correct options from its wrong ones."""
    right = [choice.text for choice in question.choices if choice.correct]
    wrong = [choice.text for choice in question.choices if not choice.correct]
    if not wrong:
        return
    right_marks, wrong_marks = {final_mark(t) for t in right}, {final_mark(t) for t in wrong}
    if not right_marks & wrong_marks:
        yield _warning(question, f"the final punctuation gives the answer away: the correct option(s) end "
                                 f"{_marks(right_marks)}, every wrong one {_marks(wrong_marks)}; end them alike")
    shared = separating_opening(right, wrong)
    if shared is not None:
        side, words = shared
        yield _warning(question, f"the opening words give the answer away: every {side} option opens with "
                                 f"{' '.join(words)!r} and no {'wrong' if side == 'correct' else 'correct'} one does; "
                                 f"word the options so that their openings do not sort them")


def separating_opening(right: list[str], wrong: list[str]) -> tuple[str, tuple[str, ...]] | None:
    """("wrong", words) when the wrong options, two or more, all open with `words` and no correct
    one does; ("correct", words) the other way round; None when openings sort nothing."""
    for words in range(1, OPENING_WORDS + 1):
        for side, same, other in (("wrong", wrong, right), ("correct", right, wrong)):
            openings = {opening(text, words) for text in same}
            if len(same) >= 2 and len(openings) == 1:
                [shared] = openings
                if len(shared) == words and shared not in {opening(text, words) for text in other}:
                    return side, shared
    return None


def odd_one_out(choices: tuple[Choice, ...]) -> int | None:
    """The index of the option whose opening words differ from all the others' when those
    others, two or more, open alike (compared over one, two, three words, the first that tells
    them apart); None when no option stands out so."""
    if len(choices) < 3:
        return None
    for words in range(1, OPENING_WORDS + 1):
        openings = [opening(choice.text, words) for choice in choices]
        counts = Counter(openings)
        if len(counts) == 1:
            continue  # all alike so far: the next word may tell one apart
        if len(counts) == 2 and min(counts.values()) == 1:
            return next(i for i, found in enumerate(openings) if counts[found] == 1)
        return None
    return None


@dataclass(frozen=True)
class OddOneOutFigure:
    """How often the odd one out is correct among `questions` questions that have one, against
    `chance`, the count expected if it were an option picked at random."""

    correct: int
    questions: int
    chance: float
    luck: float

    @property
    def share(self) -> float:
        return self.correct / self.questions if self.questions else 0.0

    @property
    def chance_share(self) -> float:
        return self.chance / self.questions if self.questions else 0.0

    @property
    def over_margin(self) -> bool:
        return self.share > self.chance_share + MARGIN_OVER_CHANCE


def odd_one_out_figure(questions: Iterable[Question]) -> OddOneOutFigure:
    """The odd one out's record over `questions`. `luck` is the chance of at least that many
    correct odd ones out if each were an option picked at random."""
    odds = []  # per question with an odd one out: (is it correct, share of correct options)
    for question in questions:
        if isinstance(question, ChoiceQuestion):
            odd = odd_one_out(question.choices)
            if odd is not None:
                odds.append((question.choices[odd].correct, len(question.correct_indices) / len(question.choices)))
    correct = sum(hit for hit, _ in odds)
    return OddOneOutFigure(correct, len(odds), sum(p for _, p in odds), _tail([p for _, p in odds], correct))


def opening_rank_cues(questions: Iterable[Question]) -> Iterator[BankError]:
    """A warning when the odd one out is correct more often than chance + MARGIN_OVER_CHANCE, and
    more often than luck explains, over all the questions checked."""
    questions = list(questions)
    figure = odd_one_out_figure(questions)
    if figure.over_margin and figure.luck < MAX_LUCK:
        files = sorted({question.source.file for question in questions})
        yield BankError(os.path.commonpath(files) if len(files) > 1 else files[0], 0, None,
                        f"the option that opens differently from all the others is correct in {figure.correct} of "
                        f"{figure.questions} questions ({figure.share:.0%}; chance {figure.chance_share:.0%}): "
                        f"word the options of those questions so that the key does not stand out by its opening")


def _tail(probabilities: list[float], at_least: int) -> float:
    """P(at least `at_least` successes) for independent trials with these probabilities."""
    counts = [1.0]  # counts[k]: P(k successes so far)
    for p in probabilities:
        counts = [(counts[k] if k < len(counts) else 0.0) * (1 - p) + (counts[k - 1] * p if k else 0.0)
                  for k in range(len(counts) + 1)]
    return sum(counts[at_least:])


def _marks(marks: set[str]) -> str:
    return " or ".join(f"with {mark!r}" if mark else "without a mark" for mark in sorted(marks))


def _warning(question: Question, message: str) -> BankError:
    return BankError(question.source.file, question.source.line, question.id, message)
