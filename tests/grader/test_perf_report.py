"""The perf report: ratios against SDPA's best backend, ties, % of peak on a known GPU, no GPU
claim on CPU, skipped sizes, and the plans."""
from __future__ import annotations

import io
import json

import pytest

from quizprep import budget
from quizprep.grader import perf
from quizprep.grader.perf import Measured, PerfCase, PerfPlan


def synthetic(case: int, who: str, centre: float, ran: str | None = None) -> Measured:
    samples = [centre * (1 + 0.001 * i) for i in range(20)]
    return Measured(case=case, who=who, ran=ran, samples=samples, peak_bytes=1000, score_tensors=0,
                    score_bytes=0, peak_live_bytes=10, probes=[[0.0]] * 20)


def test_report_ratio_tie_and_percent_of_peak_on_a_known_gpu() -> None:
    cases = (PerfCase(4, 16, 512, 64, False, "bfloat16"), PerfCase(4, 16, 1024, 64, False, "bfloat16"))
    plan = PerfPlan("cuda", cases, runs=20)
    yours = [synthetic(0, "yours", 1.0e-3), synthetic(1, "yours", 2.0e-3)]
    sdpa = [synthetic(0, "FLASH_ATTENTION", 1.0005e-3, "flash"), synthetic(0, "MATH", 3e-3, "math"),
            synthetic(1, "FLASH_ATTENTION", 1.0e-3, "flash")]
    references = [[[0.0]] * 20, [[0.0]] * 20]
    report = perf.build_report(plan, yours, sdpa, references, "NVIDIA H100 80GB HBM3")
    tied, slower = report.rows
    assert tied.best == "FLASH_ATTENTION" and tied.tied
    assert not slower.tied and slower.ratio == pytest.approx(2.0, rel=1e-2)
    expected_tflops = cases[1].flops / statistics_median(yours[1].samples) / 1e12
    assert slower.percent_of_peak == pytest.approx(100 * expected_tflops * 1e12 / 989e12)
    text = render_text(report)
    assert "tied" in text and "2.00× slower" in text and "% of peak" in text
    assert "H100 SXM" in text


def test_cpu_report_makes_no_gpu_claim_and_json_is_complete() -> None:
    plan = PerfPlan("cpu", (PerfCase(2, 4, 256, 64, True, "float32"),), runs=20)
    report = perf.build_report(
        plan, [synthetic(0, "yours", 2e-3)], [synthetic(0, "MATH", 1e-3, "math")], [[[0.0]] * 20], "CPU"
    )
    assert report.rows[0].percent_of_peak is None
    text = render_text(report)
    assert "Performance on CPU" in text and "no GPU claim" in text and "% of peak" not in text
    data = json.loads(json.dumps(report.to_dict()))
    row = data["rows"][0]
    assert row["flops"] == budget.attention_flops(2, 4, 256, 256, 64, True)
    assert row["yours"]["stats"]["runs"] == 20 and row["sdpa"][0]["ran"] == "math"
    assert row["ratio_to_best"] == pytest.approx(2.0, rel=1e-2) and data["confidence"] == 0.95


def test_skipped_sizes_appear_in_table_and_words() -> None:
    plan = PerfPlan("cpu", (PerfCase(1, 1, 64, 8, False, "float32"), PerfCase(1, 1, 128, 8, False, "float32")))
    skipped = Measured(case=1, who="yours", skipped="needs 9.00 GiB by its budget, more than 80% of the 8 GiB free")
    yours = [synthetic(0, "yours", 1e-3), skipped]
    report = perf.build_report(plan, yours, [], [[[0.0]] * 20, []], "CPU")
    text = render_text(report)
    assert "skipped: needs 9.00 GiB" in text
    assert report.rows[1].check == "not run" and report.passed


def test_faster_than_the_baseline_is_said_as_how_many_times_faster() -> None:
    """Sixth red team: a run 14 times faster than the baseline read "0.07× faster"."""
    plan = PerfPlan("cpu", (PerfCase(2, 4, 256, 64, False, "float32"),), runs=20)
    report = perf.build_report(plan, [synthetic(0, "yours", 0.1e-3)], [synthetic(0, "MATH", 1.4e-3, "math")],
                               [[[0.0]] * 20], "CPU")
    assert "14.00× faster" in render_text(report) and "14.00× faster" in perf.headline(report)
    assert "0.07× faster" not in render_text(report)


def test_a_size_where_your_code_raised_is_no_pass_in_the_json() -> None:
    """The perf check failed on the raise while the JSON's perf section said passed (sixth red team)."""
    plan = PerfPlan("cpu", (PerfCase(1, 1, 64, 8, False, "float32"),), runs=20)
    raised = Measured(case=0, who="yours", error="RuntimeError: no")
    report = perf.build_report(plan, [raised], [synthetic(0, "MATH", 1e-3, "math")], [[[0.0]] * 20], "CPU")
    assert report.passed is False and report.to_dict()["passed"] is False


def test_plans_follow_the_issue() -> None:
    gpu = perf.gpu_plan(full=True)
    assert {c.dtype for c in gpu.cases} == {"bfloat16", "float16"}
    assert {c.head_dim for c in gpu.cases} == {64, 128}
    assert {c.n for c in gpu.cases} == {512, 1024, 2048, 4096, 8192, 16384}
    assert {(c.batch, c.heads) for c in gpu.cases} == {(4, 16)} and gpu.runs >= 20 and len(gpu.cases) == 48
    default = perf.gpu_plan()  # within a minute on a GPU: a subset of the full plan
    assert set(default.cases) < set(gpu.cases) and len(default.cases) == 6 and {c.causal for c in default.cases} == {
        False, True}
    assert gpu.batch_seconds > 0 and default.batch_seconds > 0  # a batch of runs per request on GPU
    cpu = perf.cpu_plan()
    assert {c.dtype for c in cpu.cases} == {"float32"} and cpu.device == "cpu"
    assert PerfPlan.from_json(gpu.to_json()) == gpu


def statistics_median(samples):
    import statistics

    return statistics.median(samples)


def render_text(report) -> str:
    from rich.console import Console

    console = Console(width=220, record=True, file=io.StringIO())
    console.print(perf.render(report))
    return console.export_text()
