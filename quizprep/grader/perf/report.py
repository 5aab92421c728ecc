"""Layer 3 of the perf phase, pure Python: joins the learner's numbers with SDPA's, re-validates
them (:mod:`.recheck`: outputs against what the clean process computed on the same inputs, times
against the device and the grader's own clock), and says in words what the memory numbers mean."""
from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass
from typing import Any, Sequence

from quizprep import budget
from quizprep.grader.learner_side.perf_clocks import CpuClock, CudaClock
from quizprep.grader.learner_side.perf_runner import Measured
from quizprep.grader.perf.plan import (
    CONFIDENCE,
    PerfCase,
    PerfPlan,
    TimingStats,
    achieved_tflops,
    budget_bytes,
    device_peak,
    flops_bound,
)
from quizprep.grader.perf import table
from quizprep.grader.perf.recheck import NOT_RUN, RECHECK_OK, format_seconds, recheck, timing_problem


@dataclass
class Contender:
    who: str
    ran: str | None
    stats: TimingStats | None
    tflops: float | None
    peak_bytes: int | None
    budget_bytes: int | None
    score_tensors: int | None
    score_bytes: int | None
    peak_live_bytes: int | None
    skipped: str | None = None
    error: str | None = None


@dataclass
class CaseRow:
    case: PerfCase
    yours: Contender
    backends: list[Contender]
    best: str | None = None  # the fastest SDPA backend that ran
    ratio: float | None = None  # your median / best median; > 1 is slower
    tied: bool = False
    percent_of_peak: float | None = None
    check: str = NOT_RUN  # RECHECK_OK, NOT_RUN or what differs
    # The check failed on times that cannot be true, not on outputs. Read where the report is built;
    # a report rebuilt from its JSON (for rendering) leaves it False.
    timings_forged: bool = False

    @property
    def differs(self) -> bool:
        """The re-check found timed outputs, or times, that are not right."""
        return self.check not in (RECHECK_OK, NOT_RUN)


@dataclass
class PerfReport:
    device: str
    device_name: str
    clock: str
    peak: tuple[float, str] | None
    rows: list[CaseRow]
    warnings: list[str]
    summary: list[str]

    @property
    def passed(self) -> bool:
        """Perf never fails a grade for being slow; it fails when timed outputs are wrong, when your code
        raised at a size, or when nothing could be timed: the `perf-recheck` and `perf` checks' verdicts."""
        timed = any(row.yours.stats for row in self.rows)
        return timed and not any(row.differs or row.yours.error for row in self.rows)

    def to_dict(self) -> dict[str, Any]:
        def contender(c: Contender) -> dict[str, Any]:
            data = asdict(c)
            data["median_s"] = c.stats.median if c.stats else None
            return data

        return {
            "device": self.device,
            "device_name": self.device_name,
            "clock": self.clock,
            "peak_flops": self.peak[0] if self.peak else None,
            "peak_description": self.peak[1] if self.peak else None,
            "confidence": CONFIDENCE,
            "passed": self.passed,
            "warnings": self.warnings,
            "summary": self.summary,
            "rows": [
                {
                    "case": asdict(row.case),
                    "flops": row.case.flops,
                    "yours": contender(row.yours),
                    "sdpa": [contender(b) for b in row.backends],
                    "best_sdpa": row.best,
                    "ratio_to_best": row.ratio,
                    "tied_with_best": row.tied,
                    "percent_of_peak": row.percent_of_peak,
                    "check": row.check,
                }
                for row in self.rows
            ],
        }


def _contender(case: PerfCase, measured: Measured, with_mask: bool) -> Contender:
    stats = TimingStats.from_samples(measured.samples) if measured.samples else None
    planned = None
    if measured.score_bytes is not None:
        planned = budget_bytes(case, measured.score_bytes / case.pairs, with_mask)
    return Contender(
        who=measured.who,
        ran=measured.ran,
        stats=stats,
        tflops=achieved_tflops(case.flops, stats.median) if stats else None,
        peak_bytes=measured.peak_bytes,
        budget_bytes=planned,
        score_tensors=measured.score_tensors,
        score_bytes=measured.score_bytes,
        peak_live_bytes=measured.peak_live_bytes,
        skipped=measured.skipped,
        error=measured.error,
    )


def build_report(
    plan: PerfPlan,
    yours: list[Measured],
    sdpa: list[Measured],
    references: list[list[list[float] | None]],
    device_name: str,
    warnings: Sequence[str] = (),
    fingerprints: list[list[list[float] | None]] | None = None,
    forward_seconds: Sequence[float] = (),
) -> PerfReport:
    """``references`` and ``fingerprints``: per case and timed run, what the clean process
    computed for the checked runs (None elsewhere); without ``fingerprints`` only rows are checked."""
    peak = device_peak(device_name) if plan.device == "cuda" else None
    bound = flops_bound(plan.device, device_name)
    rows = []
    for index, case in enumerate(plan.cases):
        mine = next(m for m in yours if m.case == index)
        forward = forward_seconds[index] if index < len(forward_seconds) else 0.0
        forged = timing_problem(case, mine, plan, bound, forward) if mine.samples else None
        if forged:  # no statistics of times that cannot be true
            mine = dataclasses.replace(mine, samples=[], error="timings rejected, see the re-check")
        row = CaseRow(
            case=case,
            yours=_contender(case, mine, with_mask=True),
            backends=[_contender(case, m, with_mask=False) for m in sdpa if m.case == index],
        )
        _compare(row)
        if row.yours.stats and row.yours.tflops is not None and peak and case.dtype in ("bfloat16", "float16"):
            row.percent_of_peak = 100 * row.yours.tflops * 1e12 / peak[0]
        row.check = forged or recheck(case, mine, references[index], fingerprints[index] if fingerprints else None)
        row.timings_forged = bool(forged)
        rows.append(row)
    clock = CudaClock.label if plan.device == "cuda" else f"{CpuClock.label}, {plan.threads} thread(s)"
    report = PerfReport(plan.device, device_name, clock, peak, rows, list(warnings), [])
    report.summary = describe_memory(report)
    return report


def _compare(row: CaseRow) -> None:
    timed = [(b, b.stats) for b in row.backends if b.stats]
    if not timed or not row.yours.stats:
        return
    best, stats = min(timed, key=lambda pair: pair[1].median)
    row.best = best.who
    row.ratio = row.yours.stats.median / stats.median
    row.tied = row.yours.stats.overlaps(stats)


_SDPA_NAMES = {"FLASH_ATTENTION": "flash", "EFFICIENT_ATTENTION": "memory-efficient",
               "CUDNN_ATTENTION": "cuDNN", "MATH": "math"}


def _baseline_name(contender: Contender) -> str:
    """"SDPA flash" for an SDPA backend (by the kernel that ran), else the baseline's own name."""
    if contender.who not in _SDPA_NAMES:
        return contender.who
    return f"SDPA {contender.ran or _SDPA_NAMES[contender.who]}"


def describe_memory(report: PerfReport) -> list[str]:
    """What the memory numbers mean, in sentences, at the largest size that ran."""
    ran = [row for row in report.rows if row.yours.score_tensors is not None]
    if not ran:
        return []
    row = max(ran, key=lambda r: (r.case.n, not r.case.causal))
    yours, case = row.yours, row.case
    sentences = []
    if yours.score_tensors:
        times = "once" if yours.score_tensors == 1 else f"{yours.score_tensors} times"
        sentences.append(
            f"Your implementation materialises an n×m score-sized tensor {times}: "
            f"{budget.format_bytes(yours.score_bytes or 0)} at n={case.n} "  # counted with score_tensors
            f"({case.batch}·{case.heads}·{case.n}·{case.n} elements each)"
            + (
                f", at most {budget.format_bytes(yours.peak_live_bytes)} of intermediates alive at once."
                if yours.peak_live_bytes is not None
                else "."
            )
        )
    else:
        sentences.append(f"Your implementation creates no n×m tensor at n={case.n}.")
    for backend in row.backends:
        if backend.score_tensors is None:
            continue
        name = _baseline_name(backend)
        extra = (backend.peak_bytes or 0) - case.qkv_bytes() - case.output_bytes()
        if backend.score_tensors == 0:
            sentences.append(
                f"{name} keeps O(n) extra memory: {budget.format_bytes(max(extra, 0))} "
                f"beyond inputs and output at n={case.n}."
            )
        else:
            sentences.append(
                f"{name} materialises {backend.score_tensors} score-sized tensor(s), "
                f"{budget.format_bytes(backend.score_bytes or 0)} at n={case.n}."
            )
    skipped = [r for r in report.rows if r.yours.skipped]
    if skipped:
        first = min(skipped, key=lambda r: r.case.n)
        sentences.append(f"Skipped from {first.case.label}: {first.yours.skipped}.")
    return sentences


# How each case kind's FLOPs are counted (PerfCase.flops), as the table's note says it.
FLOP_NOTES = {
    "attention": "FLOPs: 4·B·H·d per attended pair (causal counts only allowed pairs).",
    "backward": "FLOPs: 2.5 × the forward's 4·B·H·d per attended pair, as FlashAttention-2 counts the backward "
                "(SDPA's time also holds the forward autograd needs).",
    "rope": "FLOPs: 3 per rotated element.",
}


def render(report: PerfReport):
    """A Rich renderable: one line per size at the console's width (:mod:`.table`), then the
    re-check's findings and the memory story in words."""
    from rich.console import Group
    from rich.text import Text

    where = "CPU" if report.device == "cpu" else report.device_name
    title = Text(f"Performance on {where}, {table.batch_and_heads(report)} ({report.clock}; "
                 f"medians with {CONFIDENCE:.0%} intervals)", style="bold")
    notes = [Text(line, style="red") for line in table.findings(report)]
    notes += [Text(sentence) for sentence in report.summary]
    notes += [Text(f"⚠ {warning}", style="yellow") for warning in report.warnings]
    if report.device == "cpu":
        notes.append(Text("CPU numbers: no GPU claim can be read from them.", style="dim"))
    elif report.peak:
        notes.append(Text(f"Peak: {report.peak[1]}, {report.peak[0] / 1e12:.0f} TFLOP/s.", style="dim"))
    kind = report.rows[0].case.kind if report.rows else "attention"
    notes.append(Text(
        "Ratios of medians; 'tied' (≈) when the confidence intervals overlap; ✓ timed outputs re-checked. "
        + FLOP_NOTES[kind], style="dim"))
    return Group(title, table.TextTable(report), *notes)


def report_from_dict(data: dict[str, Any]) -> PerfReport:
    """Rebuild a report from :meth:`PerfReport.to_dict` (what `grade --json` carries)."""

    def contender(item: dict[str, Any]) -> Contender:
        fields = {key: value for key, value in item.items() if key != "median_s"}
        fields["stats"] = TimingStats(**item["stats"]) if item["stats"] else None
        return Contender(**fields)

    rows = [
        CaseRow(
            case=PerfCase(**row["case"]),
            yours=contender(row["yours"]),
            backends=[contender(item) for item in row["sdpa"]],
            best=row["best_sdpa"],
            ratio=row["ratio_to_best"],
            tied=row["tied_with_best"],
            percent_of_peak=row["percent_of_peak"],
            check=row["check"],
        )
        for row in data["rows"]
    ]
    peak = (data["peak_flops"], data["peak_description"]) if data["peak_flops"] else None
    return PerfReport(data["device"], data["device_name"], data["clock"], peak, rows,
                      list(data["warnings"]), list(data["summary"]))


def render_data(data: dict[str, Any]):
    """The Rich table for a report carried as plain data."""
    return render(report_from_dict(data))


def headline(report: PerfReport) -> str:
    """One line for the check list: the largest size that ran, against the best backend."""
    timed = [(row, row.yours.stats) for row in report.rows if row.yours.stats and row.ratio is not None]
    if not timed:
        return "no size could be timed"
    row, stats = max(timed, key=lambda pair: (pair[0].case.n, not pair[0].case.causal))
    best = next(b for b in row.backends if b.who == row.best)
    name = _baseline_name(best)
    where = "CPU" if report.device == "cpu" else report.device_name
    ratio = row.ratio or 0.0  # set on every timed row
    comparison = (
        f"tied with {name}" if row.tied
        else f"{table.compared(ratio)} than {name}"
    )
    return f"{where}, {row.case.label}: {format_seconds(stats.median)}, {comparison}"
