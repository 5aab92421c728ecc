"""The perf table as text, one line per size, that reads at 80 columns as
``torch.utils.benchmark.Compare`` prints: size, your median, the best SDPA backend, the ratio,
TFLOP/s, % of peak and peak memory / budget. Where it fits (about 120 columns) each median gets
its confidence interval and the best backend its time. Everything else is in ``--json``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from quizprep.grader.perf.recheck import RECHECK_OK, format_seconds

DTYPE_SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float64": "fp64"}
BACKEND_SHORT = {"FLASH_ATTENTION": "flash", "EFFICIENT_ATTENTION": "mem-eff", "CUDNN_ATTENTION": "cuDNN",
                 "MATH": "math", "flash (CPU)": "flash", "memory-efficient": "mem-eff"}


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[..., str]
    left: bool = False
    narrow: str = ""  # the header in the narrow layout, if shorter

    def title(self, wide: bool) -> str:
        return self.header if wide or not self.narrow else self.narrow


def size_label(case) -> str:
    mask = "causal" if case.causal else "full"
    return f"n={case.n} d={case.head_dim} {mask} {DTYPE_SHORT.get(case.dtype, case.dtype)}"


def short_bytes(count: int) -> str:
    """Binary units in three or four characters: 640K, 12M, 1.5G."""
    value = float(count)
    for unit in ("B", "K", "M", "G", "T"):
        if value < 1024 or unit == "T":
            return f"{value:.0f}{unit}" if value >= 10 or unit == "B" else f"{value:.1f}{unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _best(row):
    return next((b for b in row.backends if b.who == row.best), None)


def _backend(contender) -> str:
    name = contender.ran or contender.who
    return BACKEND_SHORT.get(name, name)


def _yours(row, wide: bool) -> str:
    stats = row.yours.stats
    if not wide:
        return format_seconds(stats.median)
    return f"{format_seconds(stats.median)} [{format_seconds(stats.low)}–{format_seconds(stats.high)}]"


def _best_cell(row, wide: bool) -> str:
    best = _best(row)
    if best is None:
        return "none ran"
    return f"{format_seconds(best.stats.median)} {_backend(best)}" if wide else _backend(best)


def compared(ratio: float) -> str:
    """Your median against the baseline's in words: 0.07 is 14.29× faster, not "0.07× faster"."""
    return f"{1 / ratio:.2f}× faster" if 0 < ratio < 1 else f"{ratio:.2f}× slower"


def _ratio(row, wide: bool) -> str:
    if row.ratio is None:
        return ""
    if wide:
        return f"tied ({row.ratio:.2f}×)" if row.tied else compared(row.ratio)
    return f"{'≈' if row.tied else ''}{row.ratio:.2f}×"


def _memory(row, wide: bool) -> str:
    yours = row.yours
    if yours.peak_bytes is None or yours.budget_bytes is None:
        return ""
    return f"{short_bytes(yours.peak_bytes)}{' / ' if wide else '/'}{short_bytes(yours.budget_bytes)}"


COLUMNS = (
    Column("size", lambda row, wide: size_label(row.case), left=True),
    Column("yours", _yours),
    Column("best SDPA", _best_cell),
    Column("ratio", _ratio),
    Column("TFLOP/s", lambda row, wide: f"{row.yours.tflops:.3g}"),
    Column("% of peak", lambda row, wide: f"{row.percent_of_peak:.1f}%" if row.percent_of_peak is not None else "",
           narrow="peak%"),
    Column("mem/budget", _memory),
    Column("", lambda row, wide: "✓" if row.check == RECHECK_OK else "✗"),
)


def table_lines(report, width: int) -> list[str]:
    """The table's lines, none longer than `width`: the wide layout where it fits, else the
    narrow one (a skip or an error is cut with '…')."""
    wide = _layout(report, True, width)
    return wide if all(len(line) <= width for line in wide) else _layout(report, False, width)


def _layout(report, wide: bool, width: int) -> list[str]:
    columns = [c for c in COLUMNS if report.peak or c.header != "% of peak"]
    timed = [row for row in report.rows if row.yours.stats]
    cells = {id(row): [c.cell(row, wide) for c in columns] for row in timed}
    widths = [max([len(c.title(wide))] + [len(cells[id(row)][i]) for row in timed]) for i, c in enumerate(columns)]
    widths[0] = max([widths[0]] + [len(size_label(row.case)) for row in report.rows])
    gap = " "

    def line(values: list[str]) -> str:
        parts = [v.ljust(w) if c.left else v.rjust(w) for c, v, w in zip(columns, values, widths)]
        return gap.join(parts).rstrip()

    lines = [line([c.title(wide) for c in columns])]
    for row in report.rows:
        if id(row) in cells:
            lines.append(line(cells[id(row)]))
        else:
            why = f"skipped: {row.yours.skipped}" if row.yours.skipped else f"error: {row.yours.error}"
            lines.append(_cut(f"{size_label(row.case).ljust(widths[0])}{gap}{why}", width))
    return lines


def findings(report) -> list[str]:
    """Each re-check finding in full (the table only marks its row ✗)."""
    return [f"✗ {size_label(row.case)}: {row.check}" for row in report.rows if row.differs]


def batch_and_heads(report) -> str:
    return ", ".join(f"B={b} H={h}" for b, h in sorted({(row.case.batch, row.case.heads) for row in report.rows}))


class TextTable:
    """A Rich renderable that lays the table out for the width it is printed at, never wrapping."""

    def __init__(self, report) -> None:
        self.report = report

    def __rich_console__(self, console, options):
        from rich.text import Text

        for text in table_lines(self.report, options.max_width):
            yield Text(text, no_wrap=True, overflow="ellipsis")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
