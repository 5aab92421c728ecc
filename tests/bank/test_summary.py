"""Home's summary of the banks (`quizprep.bank.summary`): what a full load of the same files
gives, and never the summary of other bytes than the files hold now."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

import pytest

from quizprep.bank import load_banks
from quizprep.bank.summary import read_summary, summary_of

TUI_BANKS = Path(__file__).parents[1] / "tui" / "data"  # beta has a question the loader skips


@pytest.fixture
def banks(tmp_path: Path) -> Path:
    return Path(shutil.copytree(TUI_BANKS, tmp_path / "banks"))


def test_a_summary_is_kept_when_the_banks_are_loaded_through_the_cache(banks: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert read_summary([banks], cache) is None
    load_banks([banks], cache_dir=cache)
    summary = read_summary([banks], cache)
    assert summary == summary_of(load_banks([banks]))
    assert [q.id for q in summary.questions] == ["alpha-choice", "alpha-multi", "alpha-numeric", "alpha-free",
                                                 "beta-choice"]
    assert {error.id for error in summary.errors} == {"beta-broken"}


def test_the_shipped_banks_summary_has_their_merged_ids(tmp_path: Path) -> None:
    load_banks(cache_dir=tmp_path)
    summary = read_summary(None, tmp_path)
    assert summary == summary_of(load_banks()) and summary.merged and not summary.errors


def retitled(banks: Path) -> None:
    alpha = banks / "alpha.yaml"
    alpha.write_text(alpha.read_text().replace("title: Alpha", "title: Alpha edited", 1))


def added(banks: Path) -> None:
    text = (banks / "beta.yaml").read_text().replace("beta", "gamma")
    (banks / "gamma.yaml").write_text(text)


def removed(banks: Path) -> None:
    (banks / "beta.yaml").unlink()


@pytest.mark.parametrize("edit", [retitled, added, removed])
def test_any_edit_to_the_files_leaves_no_summary_until_they_are_loaded_again(
        banks: Path, tmp_path: Path, edit: Callable[[Path], None]) -> None:
    cache = tmp_path / "cache"
    before = load_banks([banks], cache_dir=cache)
    edit(banks)
    assert read_summary([banks], cache) is None
    after = load_banks([banks], cache_dir=cache)
    assert summary_of(after) != summary_of(before)
    assert read_summary([banks], cache) == summary_of(after)
    assert len(list(cache.glob("home-*"))) == 1  # the summary of the old bytes is gone


def test_a_damaged_summary_is_no_summary_until_the_next_load_writes_it_again(banks: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    load_banks([banks], cache_dir=cache)
    entry, = cache.glob("home-*")
    whole = entry.read_bytes()
    for damage in (b"", b"not marshal data", whole[:-7]):
        entry.write_bytes(damage)
        assert read_summary([banks], cache) is None
        load_banks([banks], cache_dir=cache)
        assert read_summary([banks], cache) == summary_of(load_banks([banks]))


def test_a_file_that_cannot_be_read_leaves_no_summary(banks: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    missing = banks / "missing.yaml"
    assert load_banks([banks / "alpha.yaml", missing], cache_dir=cache).errors
    assert read_summary([banks / "alpha.yaml", missing], cache) is None
