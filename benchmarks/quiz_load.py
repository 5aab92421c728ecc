"""Loading 2,000 generated questions with `load_banks`, against parsing the same files with
PyYAML's fastest safe loader (the baseline: no validation, no line numbers).

Two figures: a cold load parses and validates every file (what `quizprep check` does, and the
app's first start after a bank changes); a warm load reads the validated-bank cache the quiz app
keeps (every later start). The goal is an absolute one from the issue (under 0.25 s for 2,000
questions); the ratio to the baseline, measured in the same process, says what validation costs.

    python benchmarks/quiz_load.py [--questions 2000] [--runs 5]
"""
from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from quizprep.bank import load_banks

PER_FILE = 200


def choice(n: int) -> str:
    return f"""  - id: gen-choice-{n}
    kind: choice
    difficulty: {1 + n % 3}
    tags: [generated]
    prompt: "Generated question {n}: why divide the scores by √d_k?"
    explanation: Var(q·k) = d_k for unit-variance components.
    references: ["Vaswani et al. 2017, §3.2.1"]
    choices:
      - text: To keep the variance of the scores near 1
        correct: true
        why: Var(q·k) = d_k.
      - text: To save FLOPs
        why: Scaling is one elementwise multiply.
"""


def numeric(n: int) -> str:
    return f"""  - id: gen-numeric-{n}
    kind: numeric
    difficulty: 2
    tags: [generated]
    prompt: KV cache for {{{{layers}}}} layers and {{{{seq}}}} tokens?
    explanation: Both K and V are cached.
    references: ["Llama-3-8B config.json"]
    params:
      layers: 32
      kv_heads: 8
      head_dim: 128
      seq: {{choices: [2048, 4096, 8192]}}
      bytes: 2
    derived:
      per_token: 2 * layers * kv_heads * head_dim * bytes
    answer: per_token * seq
    unit: B
    display_unit: GiB
    tolerance: 0.01
    wrong_answers:
      - formula: answer / 2
        message: Only K or only V was counted.
"""


def free(n: int) -> str:
    return f"""  - id: gen-free-{n}
    kind: free
    difficulty: 3
    tags: [generated]
    prompt: Explain the variance argument ({n}).
    explanation: See the model answer.
    references: ["Vaswani et al. 2017, footnote 4"]
    model_answer: If q and k have i.i.d. unit-variance components, q·k has variance d_k.
    rubric:
      - criterion: derives Var(q·k) = d_k
        weight: 2
      - criterion: mentions softmax saturation
        weight: 1
      - criterion: mentions vanishing gradients
        weight: 1
"""


def write_banks(folder: Path, count: int) -> None:
    """`count` questions, a third of each kind, PER_FILE to a file."""
    makers = (choice, numeric, free)
    for start in range(0, count, PER_FILE):
        body = "".join(makers[n % 3](n) for n in range(start, min(count, start + PER_FILE)))
        header = f"topic: generated-{start // PER_FILE}\ntitle: Generated bank {start // PER_FILE}\nquestions:\n"
        (folder / f"generated-{start // PER_FILE:03d}.yaml").write_text(header + body, encoding="utf-8")


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write_banks(folder, args.questions)
        result = load_banks([folder])
        assert len(result.questions) == args.questions and not result.errors, result.errors[:3]
        files = sorted(folder.glob("*.yaml"))
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        def baseline() -> None:
            for path in files:
                yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506

        cache = folder / "cache"
        load_banks([folder], cache_dir=cache)
        cold, warm, base = [], [], []
        for _ in range(args.runs):
            base.append(timed(baseline))
            cold.append(timed(lambda: load_banks([folder])))
            warm.append(timed(lambda: load_banks([folder], cache_dir=cache)))
    base_median = statistics.median(base)
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()}, "
          f"Python {platform.python_version()}")
    print(f"{args.questions} questions in {len(files)} files, median of {args.runs} runs")
    print(f"baseline yaml.load({loader.__name__}): {base_median * 1000:.0f} ms")
    for label, times in (("cold (parse + validate)", cold), ("warm (validated cache)", warm)):
        median = statistics.median(times)
        verdict = "met" if median < 0.25 else "NOT met"
        print(f"load_banks, {label}: {median * 1000:.0f} ms "
              f"({median / base_median:.2f}x baseline; goal < 250 ms: {verdict})")


if __name__ == "__main__":
    main()
