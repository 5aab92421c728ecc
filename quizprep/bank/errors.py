"""What is wrong with a bank or one of its questions, where. Apart from the model so that Home's
summary (`quizprep.bank.summary`) carries a load's errors without importing the model."""
from __future__ import annotations

from typing import NamedTuple


class BankError(NamedTuple):
    file: str
    line: int
    id: str | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file  # line 0: the whole bank
        return f"{where}: [{self.id}] {self.message}" if self.id else f"{where}: {self.message}"

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "id": self.id, "message": self.message}
