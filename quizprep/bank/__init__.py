"""Question banks: the model, YAML loading and validation, safe formulas, units."""
from quizprep.bank.loader import LoadResult, default_bank_dir, load_banks
from quizprep.bank.model import (
    Bank, BankError, Choice, ChoiceQuestion, FreeQuestion, NumericQuestion, Question, RubricItem,
)

__all__ = [
    "Bank", "BankError", "Choice", "ChoiceQuestion", "FreeQuestion", "LoadResult", "NumericQuestion",
    "Question", "RubricItem", "default_bank_dir", "load_banks",
]
