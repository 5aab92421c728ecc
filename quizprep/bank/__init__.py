"""Question banks: the model, YAML loading and validation, safe formulas, units.

The names below are imported on first use: importing any part of the package (the quiz app's
start needs only `quizprep.bank.summary`) must not load the model and the loader."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from quizprep.bank.loader import LoadResult, default_bank_dir, load_banks
    from quizprep.bank.model import (
        Bank, BankError, Choice, ChoiceQuestion, FreeQuestion, NumericQuestion, Question, RubricItem,
    )

__all__ = [
    "Bank", "BankError", "Choice", "ChoiceQuestion", "FreeQuestion", "LoadResult", "NumericQuestion",
    "Question", "RubricItem", "default_bank_dir", "load_banks",
]
_LOADER = ("LoadResult", "default_bank_dir", "load_banks")


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module 'quizprep.bank' has no attribute {name!r}")
    return getattr(importlib.import_module(f"quizprep.bank.{'loader' if name in _LOADER else 'model'}"), name)
