"""The validated-bank cache the quiz app starts from: same result, refreshed by any edit."""
from __future__ import annotations

import io
import pickle
import shutil
from pathlib import Path

import pytest

from quizprep.bank import files, loader
from quizprep.bank.loader import load_banks

SAMPLE = Path(__file__).parent / "data" / "valid.yaml"


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    return Path(shutil.copy(SAMPLE, tmp_path / "bank.yaml"))


def test_warm_load_equals_cold_and_skips_parsing(bank: Path, tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    cold = load_banks([bank], cache_dir=cache)
    monkeypatch.setattr(loader, "load_bank_file", lambda path: pytest.fail("parsed despite the cache"))
    warm = load_banks([bank], cache_dir=cache)
    assert warm.questions == cold.questions and warm.errors == cold.errors == []


def test_an_edit_is_seen_at_once(bank: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    load_banks([bank], cache_dir=cache)
    bank.write_text(bank.read_text().replace("difficulty: 3", "difficulty: 9"))
    assert [e.id for e in load_banks([bank], cache_dir=cache).errors] == ["sample-free"]


def test_only_the_latest_version_of_a_file_stays_cached(bank: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for difficulty in (1, 2, 3):
        bank.write_text(SAMPLE.read_text().replace("difficulty: 3", f"difficulty: {difficulty}"))
        load_banks([bank], cache_dir=cache)
    assert len(list(cache.glob("*.pickle"))) == 1


def test_a_damaged_entry_means_parse_again(bank: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    load_banks([bank], cache_dir=cache)
    for entry in cache.iterdir():
        entry.write_bytes(b"not a pickle")
    assert len(load_banks([bank], cache_dir=cache).questions) == 3


def test_an_unwritable_cache_costs_speed_not_correctness(bank: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "file-in-the-way"
    blocked.write_text("")
    assert len(load_banks([bank], cache_dir=blocked / "cache").questions) == 3


def test_cached_formulas_leave_their_syntax_trees_out_and_evaluate_alike(bank: Path, tmp_path: Path) -> None:
    """The trees were half of the cache's unpickling time at the quiz app's start; a formula
    read from the cache parses its source again when it is first evaluated."""
    cache = tmp_path / "cache"
    cold = load_banks([bank], cache_dir=cache).questions
    warm = load_banks([bank], cache_dir=cache).questions
    [entry] = cache.glob("*.pickle")
    assert "ast" not in classes_modules(entry.read_bytes())
    cold_numeric, warm_numeric = (next(q for q in questions if q.kind == "numeric") for questions in (cold, warm))
    env = {"per_token": 131072, "seq": 4096, "batch": 8, "answer": 3.0}
    for cold_formula, warm_formula in zip(
            [cold_numeric.answer, *(wrong.formula for wrong in cold_numeric.wrong_answers)],
            [warm_numeric.answer, *(wrong.formula for wrong in warm_numeric.wrong_answers)]):
        assert "tree" not in vars(warm_formula)
        assert warm_formula.evaluate(env) == cold_formula.evaluate(env)
        assert warm_formula.render(env) == cold_formula.render(env)


def classes_modules(pickled: bytes) -> set[str]:
    """The modules of the classes a pickle names."""
    modules: set[str] = set()

    class Recording(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> type:
            modules.add(module)
            return super().find_class(module, name)

    Recording(io.BytesIO(pickled)).load()
    return modules


def test_an_entry_is_used_only_for_the_file_and_bytes_it_was_cached_from(bank: Path, tmp_path: Path,
                                                                        monkeypatch) -> None:
    """Entries are named by a checksum of the file's path: two files whose names collide take
    turns in one entry, and neither is ever given the other's questions."""
    cache = tmp_path / "cache"
    other = tmp_path / "other.yaml"
    other.write_text(SAMPLE.read_text().replace("id: sample-", "id: other-"))
    monkeypatch.setattr(files.zlib, "crc32", lambda data: 7)
    for _ in range(2):
        assert {q.id[:6] for q in load_banks([bank], cache_dir=cache).questions} == {"sample"}
        assert {q.id[:6] for q in load_banks([other], cache_dir=cache).questions} == {"other-"}
    assert len(list(cache.glob("*.pickle"))) == 1
