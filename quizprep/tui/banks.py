"""The quiz app's question banks: Home is drawn from their cached summary, and the banks are
loaded in full once Home is on screen (in a thread) or when first needed, whichever comes first."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from quizprep.bank.files import default_cache_dir
from quizprep.bank.summary import BankSummary, read_summary, summary_of

if TYPE_CHECKING:
    from quizprep.bank.loader import LoadResult


class Banks:
    """The banks at `paths` (the shipped ones when None); `loaded` when the command line has
    already read them."""

    def __init__(self, paths: Sequence[Path | str] | None, loaded: LoadResult | None = None) -> None:
        self.paths = paths
        self._loaded = loaded
        self._summary: BankSummary | None = None
        self._loading = threading.Lock()  # the app's thread and the loop's first use wait for one load

    def read_summary(self) -> None:
        """Take Home's summary from the cache when every file is as it was last loaded."""
        if self._loaded is None:
            self._summary = read_summary(self.paths, default_cache_dir())

    def load(self) -> LoadResult:
        """The banks in full, read the first time."""
        with self._loading:
            if self._loaded is None:
                from quizprep.bank.loader import load_banks

                self._loaded = load_banks(self.paths, cache_dir=default_cache_dir())
                self._summary = None  # from now on Home shows these, should a file have changed since
            return self._loaded

    @property
    def summary(self) -> BankSummary:
        """What Home shows of the banks: the cached summary, else that of the banks in full."""
        summary = self._summary
        if summary is None:
            summary = self._summary = summary_of(self.load())
        return summary
