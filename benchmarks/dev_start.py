"""`python3 dev.py quiz` launch time: the first launch installs, later ones must not (issue 21).

Builds a throwaway venv (QUIZPREP_VENV) that sees this interpreter's packages through a .pth
file, so the first launch installs only quizprep itself (editable, as dev.py does) and needs no
torch download. Then times `dev.py quiz --version` (dev.py's own work, Python's start-up and
quizprep's command line) against the baseline `python -m quizprep --version` in the same venv,
interleaved, median of `--runs`. The app's first screen on top of that is `quiz_startup.py`'s figure.

    python benchmarks/dev_start.py [--runs 10]
"""
from __future__ import annotations

import argparse
import os
import platform
import site
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout + done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        env_dir = Path(folder) / "venv"
        venv.create(env_dir, with_pip=True)
        python = env_dir / "bin" / "python"
        packages = next(env_dir.glob("lib/python*/site-packages"))
        (packages / "borrowed.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
        env = {**os.environ, "QUIZPREP_VENV": str(env_dir)}
        env.pop("PYTHONPATH", None)
        launch = [sys.executable, str(ROOT / "dev.py"), "quiz", "--version"]
        first, output = timed(launch, env)
        print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}")
        print(f"first launch (installs quizprep): {first:.2f} s, {len(output.splitlines())} lines of output")
        baseline, second = [], []
        for _ in range(args.runs):  # interleaved: machine load hits both alike
            baseline.append(timed([str(python), "-m", "quizprep", "--version"], env)[0])
            took, output = timed(launch, env)
            second.append(took)
        base, ours = statistics.median(baseline), statistics.median(second)
        print(f"later launches, median of {args.runs}: dev.py quiz --version {ours * 1000:.0f} ms "
              f"({len(output.splitlines())} line(s) of output), python -m quizprep --version {base * 1000:.0f} ms, "
              f"ratio {ours / base:.2f}x, dev.py's own cost {(ours - base) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
