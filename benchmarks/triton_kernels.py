"""The Triton track's kernel catalogue graded as a learner would be, through Triton's interpreter
without CUDA: each planted bug (tests/grader/triton_kernels.py) must fail and get exactly its one
name; each correct style must pass. Prints the line each bug is on and seconds per kernel against
`import torch` in the same script. With --heldout or --heldout2: a held-out set of issue 31
(tests/grader/triton_heldout_kernels.py, tests/grader/triton_heldout2_kernels.py), slips planted in
kernels adapted from public code and bugs as published there.

    python benchmarks/triton_kernels.py [--heldout | --heldout2]
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "grader"))

from grader_corpus import import_torch_seconds  # noqa: E402
import triton_heldout2_kernels  # noqa: E402
import triton_heldout_kernels  # noqa: E402
from triton_kernels import BUGS, STYLES, KernelEdit  # noqa: E402


HELDOUT_SETS = {"--heldout": triton_heldout_kernels, "--heldout2": triton_heldout2_kernels}


def correct_file(path: Path) -> KernelEdit:
    """A correct kernel kept as a file (the example solution, the tensor-descriptor variant)."""
    return KernelEdit(path.stem, "", "", (), path)


def verdict(edit: KernelEdit, report) -> tuple[bool, str]:
    failing = [c for c in report.checks if c.status in {"fail", "error"}]
    names = sorted({c.diagnosis_id for c in failing if c.diagnosis_id})
    if not edit.diagnosis:
        return report.passed, "pass" if report.passed else f"WRONGLY FAILED {[c.id for c in failing]}"
    if report.passed:
        return False, f"ACCEPTED (want {edit.diagnosis})"
    ok = names == [edit.diagnosis]
    where = "; line {}: {}".format(*edit.line()) if edit.edits else ""
    said = next((c.diagnosis or c.message for c in failing), "")
    return ok, f"named {names or '-'} (want {edit.diagnosis}){where}\n      it says: {said[:300]!r}"


def main() -> None:
    from quizprep.grader.grade import GradeOptions, grade
    from quizprep.grader.worker_session import Limits, WorkerSession

    baseline = import_torch_seconds()
    print(f"python -c 'import torch': {baseline:.2f} s (median of 3)")
    tally = {"bugs": 0, "named": 0, "styles": 0, "passed": 0}
    heldout = HELDOUT_SETS.get(next((arg for arg in sys.argv[1:] if arg in HELDOUT_SETS), ""))
    bugs, styles = (heldout.BUGS, ()) if heldout else (BUGS, STYLES)
    with tempfile.TemporaryDirectory() as folder:
        files = list(heldout.CORRECT) if heldout else [
            ROOT / "tests" / "solutions" / "flash_triton.py",
            *sorted((ROOT / "tests" / "grader" / "triton_variants").glob("*.py"))]
        paths = {path.stem: path for path in files}
        for edit in bugs + styles:
            paths[edit.name] = Path(folder) / f"flash_triton_{edit.name}.py"
            paths[edit.name].write_text(edit.source())
        kernels = bugs + styles + tuple(correct_file(path) for path in files)
        session = WorkerSession(paths[bugs[0].name], limits=Limits(check_seconds=60))
        started = time.perf_counter()
        try:
            for edit in kernels:
                report = grade(paths[edit.name], GradeOptions(limits=session.limits), session)
                ok, text = verdict(edit, report)
                kind = "bugs" if edit.diagnosis else "styles"
                tally[kind] += 1
                tally["named" if edit.diagnosis else "passed"] += ok
                print(f"  {edit.name}: {text}")
        finally:
            session.close()
    per_kernel = (time.perf_counter() - started) / (tally["bugs"] + tally["styles"])
    print(f"kernel bugs failing with exactly their name {tally['named']}/{tally['bugs']}; correct styles passing "
          f"{tally['passed']}/{tally['styles']}; {per_kernel:.2f} s per kernel in a warm worker "
          f"({per_kernel / baseline:.2f}× import torch)")


if __name__ == "__main__":
    main()
