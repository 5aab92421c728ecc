"""The perf table at 80 and 120 columns, from fixed data (no timing), against golden files.
Regenerate after a deliberate change with QUIZPREP_REGOLD=1 and read the diff."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from quizprep.grader.perf import render
from quizprep.grader.perf.plan import PerfCase, TimingStats
from quizprep.grader.perf.report import CaseRow, Contender, PerfReport
from quizprep.grader.perf.table import table_lines

GOLDEN = Path(__file__).parent / "golden"
H100 = (989e12, "H100 SXM, bf16/fp16 dense")


def stats(median: float) -> TimingStats:
    return TimingStats(median, median * 0.97, median * 1.04, 0.96, median * 0.98, median * 1.02,
                       median * 0.95, median * 1.2, 20)


def contender(who: str, case: PerfCase, median: float | None, peak: int | None = None, budget: int | None = None,
              ran: str | None = None, skipped: str | None = None) -> Contender:
    return Contender(who, ran, stats(median) if median else None, case.flops / median / 1e12 if median else None,
                     peak, budget, 1, None, None, skipped=skipped)


def row(case: PerfCase, yours: float | None, best: float, *, tied: bool = False, check: str = "ok",
        skipped: str | None = None) -> CaseRow:
    mine = contender("yours", case, yours, 3 * case.qkv_bytes(), 4 * case.qkv_bytes(), skipped=skipped)
    flash = contender("FLASH_ATTENTION", case, best, ran="flash")
    math_ = contender("MATH", case, best * 6, ran="math")
    ratio = yours / best if yours else None
    percent = 100 * mine.tflops * 1e12 / H100[0] if yours else None
    return CaseRow(case, mine, [flash, math_], "FLASH_ATTENTION" if yours else None, ratio, tied, percent,
                   check if yours else "not run")


def gpu_report() -> PerfReport:
    rows = [
        row(PerfCase(4, 16, 512, 64, False, "bfloat16"), 490.2e-6, 41.3e-6),
        row(PerfCase(4, 16, 4096, 64, True, "bfloat16"), 7.81e-3, 1.52e-3),
        row(PerfCase(4, 16, 4096, 128, False, "float16"), 4.02e-3, 3.95e-3, tied=True),
        row(PerfCase(4, 16, 16384, 128, True, "float16"), 61.7e-3, 14.9e-3,
            check="run 3 (fresh inputs): element 17 of the probed rows is 0.5, expected 0.25"),
        row(PerfCase(4, 16, 16384, 128, False, "bfloat16"), None, 29.1e-3,
            skipped="needs 96.0 GiB by its budget, more than 80% of the 70.2 GiB free"),
    ]
    return PerfReport("cuda", "NVIDIA H100 80GB HBM3", "CUDA events, L2 flushed before each run", H100, rows,
                      [], ["Your implementation materialises an n×m score-sized tensor once."])


def rendered(width: int) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(render(gpu_report()))
    return console.export_text()


@pytest.mark.parametrize("width", [80, 120])
def test_table_matches_its_golden_file(width: int):
    text = rendered(width)
    golden = GOLDEN / f"perf_table_{width}.txt"
    if os.environ.get("QUIZPREP_REGOLD"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("width", [80, 100, 120, 200])
def test_one_line_per_size_within_the_width(width: int):
    lines = table_lines(gpu_report(), width)
    assert len(lines) == 1 + len(gpu_report().rows)
    assert all(len(line) <= width for line in lines), [len(line) for line in lines]
    assert lines[2].startswith("n=4096 d=64 causal bf16")


def test_narrow_table_keeps_every_column_the_issue_asks_for():
    header, first = table_lines(gpu_report(), 80)[:2]
    for column in ("yours", "best SDPA", "ratio", "TFLOP/s", "peak%", "mem/budget"):
        assert column in header
    assert "490.2 µs" in first and "flash" in first and "11.87×" in first and first.endswith("✓")
