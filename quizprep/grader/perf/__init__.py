"""`quizprep grade --perf`: time a correct attention implementation against PyTorch SDPA.

Three layers, so the honest-numbers logic is testable on a laptop:

1. :mod:`.plan`, pure Python: the sizes to run, the FLOP and memory budget of each, the median
   with a distribution-free confidence interval, ties.
2. :mod:`.measure`, torch: fresh inputs for every run, and timing any ``attend(q, k, v, causal)``
   callable or every SDPA backend that runs, with the same clock, inputs and warm-up. SDPA runs
   in a clean interpreter that the learner's code never touched. The code that also runs in the
   learner's process, the case runner and the clocks, is in
   :mod:`quizprep.grader.learner_side.perf_runner` and :mod:`~quizprep.grader.learner_side.perf_clocks`.
3. :mod:`.report`, pure Python: joins the two, re-checks the learner's outputs on the timed
   inputs against float64 probes computed by the clean process, and says in words what the
   memory numbers mean.

:mod:`.baseline` is the clean process (SDPA and the float64 probes); :mod:`quizprep.grader.learner_side.perf_worker` is
the learner's, the correctness worker with the same protections plus the timing requests, driven
one request at a time by :mod:`.remote`; :mod:`.phase` runs both and plugs the phase into the
grader.
"""
from quizprep.grader.learner_side.perf_clocks import CpuClock, CudaClock
from quizprep.grader.learner_side.perf_runner import CaseRunner, Inputs, Measured, backend_that_ran
from quizprep.grader.perf.baseline import measure_sdpa, reference_probes, sdpa_attend
from quizprep.grader.perf.measure import measure_target, time_runs
from quizprep.grader.perf.phase import perf_phase, run_perf
from quizprep.grader.perf.plan import (
    PerfCase,
    PerfError,
    PerfPlan,
    TimingStats,
    achieved_tflops,
    budget_bytes,
    cpu_plan,
    device_peak,
    gpu_plan,
    median_ci_ranks,
    skip_reason,
)
from quizprep.grader.perf.recheck import check_fingerprints, check_probes, timing_problem
from quizprep.grader.perf.report import PerfReport, build_report, headline, render, render_data, report_from_dict

__all__ = [
    "CaseRunner", "CpuClock", "CudaClock", "Inputs", "Measured", "PerfCase", "PerfError", "PerfPlan",
    "PerfReport", "TimingStats", "achieved_tflops", "backend_that_ran", "budget_bytes", "build_report",
    "check_fingerprints", "check_probes", "cpu_plan", "device_peak", "gpu_plan", "headline",
    "measure_sdpa", "measure_target", "median_ci_ranks", "perf_phase", "reference_probes", "render",
    "render_data", "report_from_dict", "run_perf", "sdpa_attend", "skip_reason", "time_runs", "timing_problem",
]
