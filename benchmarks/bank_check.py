"""How long `quizprep check` takes on hostile banks just under the 2 MiB file limit (goal: < 10 s).

Each bank is generated into a temporary folder and checked by a fresh `quizprep check FILE`
process, as an author would run it; `yaml.load` of the same file (PyYAML's C safe loader) is
timed alongside as a reference. The banks:

- long:   ~1,950 numeric questions, one ~850-character formula each over five parameters of
          1,000 values (the slow case of issue 14: 487 s before the formula-work budget).
- bigint: ~1,010-bit integers floor-divided by ~505-bit ones (the largest values formulas
          allow), so that every step is multi-word integer arithmetic.
- many:   as many small numeric questions as fit, each with the full 402 draws wanted.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

LIMIT_BYTES = 2 * 1024 * 1024
BIG_DERIVED = """\
  derived:
    half: a0 * a1 * a2 * a3 * a4 * a0 * a1 * a2 * a3
    big: half * half
"""
TARGET_BYTES = 1_970_000

HEADER = "topic: hostile\ntitle: Hostile\nquestions:\n"
QUESTION = """\
- id: q-{index}
  kind: numeric
  difficulty: 1
  tags: []
  prompt: p
  explanation: e
  references: [r]
  params:
{params}
{derived}  answer: "{answer}"
  unit: ""
  tolerance: 0.01
"""


def long_formula(index: int) -> str:
    terms, length = [], 0
    while length < 850:
        i = len(terms) + index
        term = f"(a{i % 5} * {i % 97 + 1} - a{(i + 2) % 5}) / {i % 89 + 2}"
        terms.append(term)
        length += len(term) + 3
    return " + ".join(terms)


def bigint_formula(index: int) -> str:
    # big (~1,010 bits) divided by half (~505 bits): about the costliest integer step allowed
    return " + ".join(["big // half"] * 60) + f" + {index}"


def bank(kind: str) -> str:
    ranges = "\n".join(f"    a{i}: {{range: [1, 1000]}}" for i in range(5))
    big = "\n".join(f"    a{i}: {{range: [{2**55}, {2**55 + 999}]}}" for i in range(5))
    parts, size, index = [HEADER], len(HEADER), 0
    while True:
        if kind == "long":
            text = QUESTION.format(index=index, params=ranges, derived="", answer=long_formula(index))
        elif kind == "bigint":
            text = QUESTION.format(index=index, params=big, derived=BIG_DERIVED, answer=bigint_formula(index))
        else:
            text = QUESTION.format(index=index, params="    a0: {range: [1, 1000]}", derived="",
                                   answer="a0 * 2")
        if size + len(text) > TARGET_BYTES:
            return "".join(parts)
        parts.append(text)
        size += len(text)
        index += 1


def timed(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    return time.perf_counter() - start, (done.stdout.strip().splitlines() or [""])[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kinds", nargs="*", default=["long", "bigint", "many"])
    args = parser.parse_args()
    quizprep = Path(sys.executable).with_name("quizprep")
    print(f"{platform.machine()}, {platform.python_version()}, quizprep check, median of {args.runs}")
    with tempfile.TemporaryDirectory() as folder:
        for kind in args.kinds:
            path = Path(folder) / f"{kind}.yaml"
            path.write_text(bank(kind))
            size = path.stat().st_size
            assert size <= LIMIT_BYTES
            checks, loads, last = [], [], ""
            for _ in range(args.runs):
                seconds, last = timed([str(quizprep), "check", str(path)])
                checks.append(seconds)
                start = time.perf_counter()
                yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
                loads.append(time.perf_counter() - start)
            print(f"{kind:7} {size:>9,} B  check {statistics.median(checks):6.2f} s "
                  f"(yaml.load {statistics.median(loads):5.2f} s)  goal < 10 s  | {last}")


if __name__ == "__main__":
    main()
