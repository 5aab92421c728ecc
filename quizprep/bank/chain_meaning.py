"""A chained question's predecessor that states its answer in other words (issue 33): the exact
check of `quizprep.bank.cues` matches only the same text and numbers, so it misses "allocating
cache pages on demand" read just before a key that says "blocks allocated on demand".

A follower's answer is its correct options (choice) or its rubric's criteria (free). Its words
are stemmed (PyStemmer, through bm25s) and those of the follower's own prompt are left out:
the prompt is on screen anyway. What remains is scored against the predecessor's text (prompt,
options, their `why` and explanation) with BM25 over every question of the banks checked: each
term counts its BM25 score in the predecessor relative to its best score in any question, so
rare terms weigh more than ones every question uses, and 1 means the predecessor is, term by
term, the best source of the answer in the banks. At GIVEAWAY_SCORE or more the answer is
stated; the threshold is tuned on the cases issue 33 lists and on chains that are fine
(tests/bank/test_chain_meaning.py).

bm25s costs a second to import, so only `quizprep check` imports this module."""
from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING, Iterable, Iterator

import numpy as np
import Stemmer

from quizprep.bank.cues import predecessor_text
from quizprep.bank.model import BankError, ChoiceQuestion, FreeQuestion, Question

if TYPE_CHECKING:
    from bm25s.tokenization import Tokenized


def _bm25s_on_numpy() -> ModuleType:
    """bm25s, with JAX out of its sight: where JAX is installed, bm25s imports it and runs a
    kernel at import, and on a GPU machine JAX then takes most of the GPU's memory (and fails in
    every process after the first) for a ranking that numpy does in milliseconds."""
    hidden = "jax" not in sys.modules
    if hidden:
        sys.modules["jax"] = None  # type: ignore[assignment]  # `import jax` raises ImportError
    try:
        import bm25s
    finally:
        if hidden:
            del sys.modules["jax"]
    return bm25s


bm25s = _bm25s_on_numpy()

GIVEAWAY_SCORE = 0.22
# An answer of one or two words past the prompt's ("False True", "(1, 2, 1, 16)") has no meaning
# to paraphrase; the exact check compares its text and numbers.
MIN_TERMS = 3


class ChainScorer:
    """BM25 over the predecessor texts of `questions`, to score followers' answers against them."""

    def __init__(self, questions: Iterable[Question]) -> None:
        self._stemmer = Stemmer.Stemmer("english")
        self._index = {question.id: n for n, question in enumerate(questions)}
        texts = [predecessor_text(question) for question in questions]
        self._bm25 = bm25s.BM25()
        self._bm25.index(self._tokens(texts), show_progress=False)
        self._vocabulary = set(self._bm25.vocab_dict)
        self._term_scores: dict[str, np.ndarray] = {}

    def _tokens(self, texts: list[str]) -> Tokenized:
        return bm25s.tokenize(texts, stopwords="en", stemmer=self._stemmer, show_progress=False)

    def _terms(self, text: str) -> set[str]:
        [terms] = bm25s.tokenize([text], stopwords="en", stemmer=self._stemmer, return_ids=False,
                                 show_progress=False)
        return set(terms)

    def _scores(self, term: str) -> np.ndarray:
        if term not in self._term_scores:
            self._term_scores[term] = self._bm25.get_scores([term])
        return self._term_scores[term]

    def score(self, predecessor: Question, follower: Question) -> float:
        """How much of the follower's answer, past its prompt's words, the predecessor states:
        0 (none of it) to 1 (every term, as strongly as any question in the banks does)."""
        terms = self._terms(" ".join(answer_texts(follower))) - self._terms(follower.prompt)
        terms &= self._vocabulary
        if len(terms) < MIN_TERMS or predecessor.id not in self._index:
            return 0.0
        where = self._index[predecessor.id]
        best = sum(float(self._scores(term).max()) for term in terms)
        return sum(float(self._scores(term)[where]) for term in terms) / best if best else 0.0


def answer_texts(question: Question) -> list[str]:
    """What a follower's answer says in words: its correct options, or its rubric's criteria."""
    if isinstance(question, ChoiceQuestion):
        return [choice.text for choice in question.choices if choice.correct]
    if isinstance(question, FreeQuestion):
        return [item.criterion for item in question.rubric]
    return []


def chain_giveaways(questions: Iterable[Question]) -> Iterator[BankError]:
    """A warning for each chained follower whose answer its predecessor states in other words."""
    questions = list(questions)
    by_id = {question.id: question for question in questions}
    links = [(q, by_id[f]) for q in questions for f in dict.fromkeys(q.chain) if f in by_id and answer_texts(by_id[f])]
    if not links:
        return
    scorer = ChainScorer(questions)
    for predecessor, follower in links:
        score = scorer.score(predecessor, follower)
        if score >= GIVEAWAY_SCORE:
            yield BankError(follower.source.file, follower.source.line, follower.id,
                            f"its predecessor [{predecessor.id}] states its answer in other words (similarity "
                            f"{score:.2f}, limit {GIVEAWAY_SCORE}): reword the predecessor's explanation or "
                            f"options, or ask something it does not teach")
