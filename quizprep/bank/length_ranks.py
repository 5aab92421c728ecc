"""Where the correct option of a single-answer question falls when its options are ranked by
length (longest, second longest, …): a test-wise candidate who learns that the key is usually
the second longest wins without knowing the subject (issue 33). Each rank should hold about
its chance share of the keys; `quizprep check` warns past chance + MARGIN_OVER_CHANCE.

Over all the banks checked the margin alone decides. One bank holds only a few single-answer
questions, so there a rank also has to be over-represented beyond what luck explains (a
one-sided binomial tail under MAX_LUCK): two keys of four at one rank are 50 % against 25 %,
and happen by chance a quarter of the time."""
from __future__ import annotations

import os
from dataclasses import dataclass
from math import comb
from typing import Iterable, Iterator

from quizprep.bank.model import BankError, ChoiceQuestion, Question

MARGIN_OVER_CHANCE = 0.10
MAX_LUCK = 0.05


@dataclass(frozen=True)
class RankFigure:
    """How many of `questions` single-answer questions have their key at `rank` (1 = longest),
    against `chance`, the mean share a rank would get if keys were placed at random."""

    rank: int
    count: float
    questions: int
    chance: float

    @property
    def share(self) -> float:
        return self.count / self.questions

    @property
    def over_margin(self) -> bool:
        return self.share > self.chance + MARGIN_OVER_CHANCE

    @property
    def luck(self) -> float:
        """The chance of `count` or more keys at this rank if keys were placed at random."""
        n, p = self.questions, self.chance
        return sum(comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(round(self.count), n + 1))

    @property
    def name(self) -> str:
        return "longest" if self.rank == 1 else f"{_ordinal(self.rank)} longest"

    def to_json(self) -> dict[str, object]:
        return {"rank": self.rank, "name": self.name, "count": round(self.count, 2), "share": round(self.share, 3),
                "chance": round(self.chance, 3), "limit": round(self.chance + MARGIN_OVER_CHANCE, 3),
                "over_limit": self.over_margin}


def length_ranks(question: ChoiceQuestion) -> dict[int, float]:
    """The key's rank by length (1 = longest) as shares that sum to 1: options of equal length
    share their ranks, since a candidate who picks "the second longest" has to guess among them
    ("True False" against "False True")."""
    [key] = [len(choice.text) for choice in question.choices if choice.correct]
    first = 1 + sum(len(choice.text) > key for choice in question.choices)
    tied = sum(len(choice.text) == key for choice in question.choices)
    return dict.fromkeys(range(first, first + tied), 1 / tied)


def single_answer(questions: Iterable[Question]) -> list[ChoiceQuestion]:
    return [q for q in questions if isinstance(q, ChoiceQuestion) and not q.multiple]


def rank_figures(questions: Iterable[Question]) -> list[RankFigure]:
    """One figure per rank that some single-answer question among `questions` has."""
    single = single_answer(questions)
    if not single:
        return []
    ranks = [length_ranks(q) for q in single]
    return [RankFigure(rank, sum(shares.get(rank, 0.0) for shares in ranks), len(single),
                       sum(1 / len(q.choices) for q in single if len(q.choices) >= rank) / len(single))
            for rank in range(1, max(len(q.choices) for q in single) + 1)]


def length_rank_cues(questions: Iterable[Question]) -> Iterator[BankError]:
    """A warning for each rank past chance + MARGIN_OVER_CHANCE in a bank (and beyond luck
    there), then over all the banks when there are several."""
    by_file: dict[str, list[Question]] = {}
    for question in questions:
        by_file.setdefault(question.source.file, []).append(question)
    for file, in_bank in by_file.items():
        for figure in rank_figures(in_bank):
            if figure.over_margin and figure.luck < MAX_LUCK:
                yield BankError(file, 0, None, _message(figure, "in this bank"))
    if len(by_file) > 1:
        everything = [q for in_bank in by_file.values() for q in in_bank]
        for figure in rank_figures(everything):
            if figure.over_margin:
                yield BankError(os.path.commonpath(list(by_file)), 0, None,
                                _message(figure, f"over the {len(by_file)} banks"))


def _message(figure: RankFigure, where: str) -> str:
    return (f"the correct option is the {figure.name} in {round(figure.count, 1):g} of {figure.questions} "
            f"single-answer questions {where} ({figure.share:.0%}; chance {figure.chance:.0%}, limit "
            f"{figure.chance + MARGIN_OVER_CHANCE:.0%}): rewrite options so that the key's length tells "
            f"nothing (`python benchmarks/option_lengths.py` lists the questions by rank)")


def _ordinal(n: int) -> str:
    return {2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth"}.get(n, f"{n}th")
