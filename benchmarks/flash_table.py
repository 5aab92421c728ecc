"""The tiled flash exercise against PyTorch SDPA's flash, memory-efficient and math backends.

    python benchmarks/flash_table.py [--device auto|cpu|cuda] [--sizes 1024 4096 16384]
        [--dims 64 128] [--dtype bf16] [--batch 2] [--heads 16] [--block 128] [--causal]
        [--runs 20] [--file tests/solutions/flash.py] [--json]

`--file tests/solutions/flash_triton.py --sizes 8192 --dims 128 --batch 4` times the Triton
example (a CUDA GPU only) where the Triton track's goal is set: ≥ 70 % of SDPA flash.

Each row is one (n, d): median seconds per call with its 95% distribution-free confidence
interval, achieved TFLOP/s (4·B·H·d FLOPs per attended pair, as `quizprep budget` counts),
the share of the GPU's dense 16-bit peak where the device is known, the backend that ran (by
the ATen op SDPA reached) and the largest difference from the math backend's output. Timing
reuses the grader's perf clocks: CUDA events with the L2 flushed before each run, or the
monotonic clock around one call on one CPU thread.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import sys
import warnings
from pathlib import Path
from typing import Any, Callable

import torch

from quizprep import budget
from quizprep.grader import perf
from quizprep.grader.device import policy_for

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = {"flash": "FLASH_ATTENTION", "memory-efficient": "EFFICIENT_ATTENTION", "math": "MATH"}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def load_flash(path: Path) -> Callable[..., torch.Tensor]:
    spec = importlib.util.spec_from_file_location("flash_under_test", path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module.flash_attention


def contenders(flash: Callable[..., torch.Tensor], block: int, causal: bool) -> dict[str, Callable[..., Any]]:
    """The file's flash_attention first; a kernel that picks its own tiles (the Triton example) takes no block_size."""
    if "block_size" in inspect.signature(flash).parameters:
        found: dict[str, Callable[..., Any]] = {
            f"tiled flash (block {block})": lambda q, k, v: flash(q, k, v, causal=causal, block_size=block)}
    else:
        found = {"your kernel": lambda q, k, v: flash(q, k, v, causal=causal)}
    for name, backend in BACKENDS.items():
        attend = perf.sdpa_attend(backend)
        found[f"SDPA {name}"] = lambda q, k, v, attend=attend: attend(q, k, v, causal)
    return found


def measure(call: Callable[[], Any], clock: Any, runs: int) -> perf.TimingStats:
    return perf.TimingStats.from_samples(perf.time_runs(call, lambda run: None, clock, runs, warmup=3))


def row(name: str, call: Callable[[], Any], reference: torch.Tensor | None, flops: int, clock: Any,
        runs: int, peak: tuple[float, str] | None) -> dict[str, Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a refusing SDPA kernel warns why; the error says it once
            ran = "your code" if not name.startswith("SDPA") else perf.backend_that_ran(call)
            out = call()
            stats = measure(call, clock, runs)
    except (RuntimeError, torch.OutOfMemoryError) as error:
        return {"contender": name, "skipped": str(error).strip().splitlines()[0][:120]}
    tflops = perf.achieved_tflops(flops, stats.median)
    return {"contender": name, "ran": ran, "median_s": stats.median, "ci_s": [stats.low, stats.high],
            "coverage": stats.coverage, "tflops": tflops,
            "peak_percent": 100 * tflops * 1e12 / peak[0] if peak else None,
            "max_diff_vs_math": None if reference is None else float((out.float() - reference.float()).abs().max())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096, 16384])
    parser.add_argument("--dims", type=int, nargs="+", default=[64, 128])
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--block", type=int, default=128)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--file", type=Path, default=ROOT / "tests" / "solutions" / "flash.py")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    device = policy_for(args.device).perf
    dtype = DTYPES[args.dtype]
    clock = perf.CudaClock() if device == "cuda" else perf.CpuClock(threads=1)
    if device == "cpu":
        torch.set_num_threads(1)
    name = torch.cuda.get_device_name() if device == "cuda" else "CPU"
    peak = perf.device_peak(name) if device == "cuda" else None
    generator = torch.Generator(device=device).manual_seed(0)
    rows = []
    for d in args.dims:
        for n in args.sizes:
            shape = (args.batch, args.heads, n, d)
            q, k, v = (torch.randn(shape, generator=generator, device=device, dtype=dtype) for _ in range(3))
            flops = budget.attention_flops(args.batch, args.heads, n, n, d, args.causal)
            calls = {label: (lambda fn=fn: fn(q, k, v))
                     for label, fn in contenders(load_flash(args.file), args.block, args.causal).items()}
            reference = calls["SDPA math"]() if n <= 4096 else None  # math holds B·H·n² scores
            for label, call in calls.items():
                rows.append({"n": n, "d": d, **row(label, call, reference, flops, clock, args.runs, peak)})
            del q, k, v, reference
            if device == "cuda":
                torch.cuda.empty_cache()
    result = {"device": name, "torch": torch.__version__, "dtype": args.dtype, "batch": args.batch,
              "heads": args.heads, "causal": args.causal, "clock": clock.label,
              "peak": peak[1] if peak else None, "rows": rows}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{name}, torch {torch.__version__}, {args.dtype}, B={args.batch}, H={args.heads}, "
          f"causal={args.causal}; {clock.label}" + (f"; peak: {peak[1]}" if peak else ""))
    print(f"{'n':>6} {'d':>4}  {'contender':<26} {'median':>10}  {'95% CI':<21} {'TFLOP/s':>8} "
          f"{'% peak':>7}  {'ran':<18} {'max |Δ| vs math':>15}")
    for r in rows:
        if "skipped" in r:
            print(f"{r['n']:>6} {r['d']:>4}  {r['contender']:<26} skipped: {r['skipped']}")
            continue
        ci = f"[{r['ci_s'][0] * 1e3:.3g}–{r['ci_s'][1] * 1e3:.3g}] ms"
        share = f"{r['peak_percent']:.1f}" if r["peak_percent"] is not None else "–"
        diff = f"{r['max_diff_vs_math']:.2g}" if r["max_diff_vs_math"] is not None else "–"
        print(f"{r['n']:>6} {r['d']:>4}  {r['contender']:<26} {r['median_s'] * 1e3:>8.3g} ms  {ci:<21} "
              f"{r['tflops']:>8.3g} {share:>7}  {r['ran']:<18} {diff:>15}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
