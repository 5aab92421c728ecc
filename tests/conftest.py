"""Suite-wide test set-up: CUDA-only tests skip cleanly on machines without a GPU."""
from __future__ import annotations

import importlib.util

import pytest


def _cuda_available() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not any(item.get_closest_marker("cuda") for item in items) or _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; none is available here")
    for item in items:
        if item.get_closest_marker("cuda"):
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _private_bank_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never write validated-bank caches, nor grades, into the user's own folders."""
    monkeypatch.setenv("QUIZPREP_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "bank-cache"))
    monkeypatch.setenv("QUIZPREP_DB", str(tmp_path_factory.getbasetemp() / "progress.sqlite3"))
