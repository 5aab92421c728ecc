"""The budget exercise: the example passes, correct variants pass, every classic slip is named."""
from __future__ import annotations

import importlib.util
import math
import textwrap
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from quizprep import budget
from quizprep.grader.exercises import budget as exercise
from quizprep.grader.spec import CheckFailure

SOLUTION = Path(__file__).parents[1] / "solutions" / "budget.py"


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"budget_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def source_module(tmp_path: Path, source: str) -> ModuleType:
    path = tmp_path / "budget_variant.py"
    path.write_text(textwrap.dedent(source))
    return load(path)


class FakeContext:
    """Calls the functions in-process; the isolation itself is the grader's and tested there."""

    def __init__(self, module: ModuleType, seed: int = 0) -> None:
        self.module, self.seed = module, seed

    def call(self, name: str, *args):
        return SimpleNamespace(value=getattr(self.module, name)(*args))


def verdicts(module: ModuleType, seed: int = 0) -> dict[str, CheckFailure | None]:
    results = {}
    for check in exercise.SPEC.checks:
        try:
            check.run(FakeContext(module, seed))
            results[check.id] = None
        except CheckFailure as failure:
            results[check.id] = failure
    return results


# --- the example solution and correct variants ------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_example_solution_passes_every_check(seed: int) -> None:
    assert verdicts(load(SOLUTION), seed) == {check.id: None for check in exercise.SPEC.checks}


CORRECT_VARIANTS = {
    "torch itemsize and closed-form causal count": """
        import torch

        def _size(dtype):
            return getattr(torch, dtype).itemsize

        def attention_scores_bytes(batch, heads, n, m, dtype):
            return batch * heads * n * m * _size(dtype)

        def kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype):
            per_token = 2 * layers * kv_heads * head_dim * _size(dtype)
            return per_token * seq_len * batch

        def attention_params(d_model, n_heads, n_kv_heads, bias):
            d_head = d_model // n_heads
            q = torch.nn.Linear(d_model, n_heads * d_head, bias=bias, device="meta")
            kv = torch.nn.Linear(d_model, n_kv_heads * d_head, bias=bias, device="meta")
            o = torch.nn.Linear(n_heads * d_head, d_model, bias=bias, device="meta")
            count = lambda layer: sum(p.numel() for p in layer.parameters())
            return count(q) + 2 * count(kv) + count(o)

        def attention_flops(batch, heads, n, m, head_dim, causal):
            if causal and m >= n:
                pairs = n * m - n * (n - 1) // 2
            elif causal:
                pairs = m * (m + 1) // 2
            else:
                pairs = n * m
            return 2 * 2 * batch * heads * head_dim * pairs
    """,
    "bits divided by eight, mask counted with numpy": """
        import numpy as np

        BITS = {"float64": 64, "float32": 32, "bfloat16": 16, "float16": 16, "int8": 8}

        def attention_scores_bytes(batch, heads, n, m, dtype):
            return batch * heads * n * m * BITS[dtype] // 8

        def kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype):
            k = layers * kv_heads * head_dim * seq_len * batch * BITS[dtype] // 8
            v = k
            return k + v

        def attention_params(d_model, n_heads, n_kv_heads, bias):
            d_head = d_model // n_heads
            total = 0
            for fan_in, fan_out in [(d_model, n_heads * d_head), (d_model, n_kv_heads * d_head),
                                    (d_model, n_kv_heads * d_head), (n_heads * d_head, d_model)]:
                total += fan_in * fan_out + (fan_out if bias else 0)
            return total

        def attention_flops(batch, heads, n, m, head_dim, causal):
            if causal:
                rows = np.arange(n)[:, None] + (m - n)
                pairs = int((np.arange(m)[None, :] <= rows).sum())
            else:
                pairs = n * m
            return int(batch * heads * (2 * pairs * head_dim + 2 * pairs * head_dim))
    """,
}


@pytest.mark.parametrize("name", sorted(CORRECT_VARIANTS))
def test_correct_variants_pass(tmp_path: Path, name: str) -> None:
    module = source_module(tmp_path, CORRECT_VARIANTS[name])
    assert verdicts(module) == {check.id: None for check in exercise.SPEC.checks}


# --- the catalogue of classic slips ---------------------------------------------------------

SIZES = "BYTES = {'float64': 8, 'float32': 4, 'bfloat16': 2, 'float16': 2, 'int8': 1}\n"


def mutant(tmp_path: Path, function: str, body: str) -> ModuleType:
    """The example solution with one function replaced."""
    solution = load(SOLUTION)
    module = source_module(tmp_path, SIZES + textwrap.dedent(body))
    for name in exercise.SPEC.entry_points:
        if name != function:
            setattr(module, name, getattr(solution, name))
    return module


MUTANTS = [
    # (check id, function, body, words the diagnosis must contain, quiz id)
    ("kv-cache-bytes", "kv_cache_bytes",
     "def kv_cache_bytes(L, g, d, s, b, t):\n    return L * g * d * s * b * BYTES[t]\n",
     "factor 2", "memory-kv-cache-k-and-v"),
    ("kv-cache-bytes", "kv_cache_bytes",
     "def kv_cache_bytes(L, g, d, s, b, t):\n    return 2 * L * g * d * s * b * BYTES[t] / 2**30\n",
     "GiB", "memory-gib-vs-gb"),
    ("kv-cache-bytes", "kv_cache_bytes",
     "def kv_cache_bytes(L, g, d, s, b, t):\n    return 2 * L * g * d * s * b * BYTES[t] / 1e9\n",
     "GB (bytes / 10^9)", "memory-gib-vs-gb"),
    ("kv-cache-bytes", "kv_cache_bytes",
     "def kv_cache_bytes(L, g, d, s, b, t):\n    return 2 * L * g * d * s * b * 4\n",
     "4 byte(s) per element", "memory-bytes-per-dtype"),
    ("kv-cache-bytes", "kv_cache_bytes",
     "def kv_cache_bytes(L, g, d, s, b, t):\n    return 2 * L * g * d * s * BYTES[t]\n",
     "batch", "memory-kv-cache-k-and-v"),
    ("attention-scores-bytes", "attention_scores_bytes",
     "def attention_scores_bytes(b, h, n, m, t):\n    return b * h * n * m * BYTES[t] * 8\n",
     "bits", "memory-bytes-per-dtype"),
    ("attention-scores-bytes", "attention_scores_bytes",
     "def attention_scores_bytes(b, h, n, m, t):\n    return b * h * n * n * BYTES[t]\n",
     "n × n", "memory-bytes-per-dtype"),
    ("attention-scores-bytes", "attention_scores_bytes",
     "def attention_scores_bytes(b, h, n, m, t):\n    return b * n * m * BYTES[t]\n",
     "heads", "memory-bytes-per-dtype"),
    ("attention-scores-bytes", "attention_scores_bytes",
     "def attention_scores_bytes(b, h, n, m, t):\n    return b * h * n * m * 2\n",
     "2 byte(s) per element", "memory-bytes-per-dtype"),
    ("attention-params", "attention_params",
     "def attention_params(d, h, g, bias):\n    return 4 * d * d + (4 * d if bias else 0)\n",
     "ignored GQA", "gqa-kv-cache-savings"),
    ("attention-params", "attention_params",
     "def attention_params(d, h, g, bias):\n"
     "    return 2 * d * d + 2 * d * g * d + (2 * d + 2 * g * d if bias else 0)\n",
     "n_kv_heads·d_model", "gqa-kv-cache-savings"),
    ("attention-params", "attention_params",
     "def attention_params(d, h, g, bias):\n    k = g * (d // h)\n    return 2 * d * d + 2 * d * k\n",
     "biases", "gqa-kv-cache-savings"),
    ("attention-params", "attention_params",
     "def attention_params(d, h, g, bias):\n    k = g * (d // h)\n"
     "    return d * d + 2 * d * k + ((d + 2 * k) if bias else 0)\n",
     "output projection", "gqa-kv-cache-savings"),
    ("attention-flops", "attention_flops",
     "def attention_flops(b, h, n, m, d, causal):\n"
     "    pairs = n * m - n * (n - 1) // 2 if causal else n * m\n    return 2 * b * h * d * pairs\n",
     "MACs", "complexity-flops-vs-macs"),
    ("attention-flops", "attention_flops",
     "def attention_flops(b, h, n, m, d, causal):\n    return 4 * b * h * n * m * d // (2 if causal else 1)\n",
     "exactly half", "complexity-flops-vs-macs"),
    ("attention-flops", "attention_flops",
     "def attention_flops(b, h, n, m, d, causal):\n    return 4 * b * h * n * m * d\n",
     "ignored causal", "complexity-flops-vs-macs"),
    ("attention-flops", "attention_flops",
     "def attention_flops(b, h, n, m, d, causal):\n"
     "    pairs = sum(min(i + 1, m) for i in range(n)) if causal else n * m\n    return 4 * b * h * d * pairs\n",
     "top-left", "complexity-flops-vs-macs"),
    ("attention-flops", "attention_flops",  # Chinchilla's table: 3 softmax FLOPs per pair (issue 31)
     "def attention_flops(b, h, n, m, d, causal):\n"
     "    pairs = sum(m - n + i + 1 for i in range(n)) if causal else n * m\n"
     "    return 4 * b * h * d * pairs + 3 * b * h * pairs\n",
     "softmax (3 FLOPs", "complexity-flops-vs-macs"),
    ("kv-cache-bytes", "kv_cache_bytes",  # a cache module's int64 position buffer summed in (issue 31)
     "def kv_cache_bytes(L, g, d, s, b, t):\n    return 2 * L * g * d * s * b * BYTES[t] + 8 * s * b\n",
     "int64 position index", "memory-kv-cache-k-and-v"),
    ("attention-params", "attention_params",  # multi-head attention's 4·d_model biases kept under GQA (realworld8)
     "def attention_params(d, h, g, bias):\n    k = g * (d // h)\n"
     "    return 2 * d * d + 2 * d * k + (4 * d if bias else 0)\n",
     "every bias d_model wide", "gqa-kv-cache-savings"),
]


@pytest.mark.parametrize(("check_id", "function", "body", "words", "quiz"), MUTANTS,
                         ids=[f"{m[0]}:{m[3]}" for m in MUTANTS])
def test_each_slip_fails_its_check_with_its_diagnosis(tmp_path, check_id, function, body, words, quiz) -> None:
    results = verdicts(mutant(tmp_path, function, body))
    failure = results.pop(check_id)
    assert failure is not None, "the mutant passed"
    assert words in failure.diagnosis, failure.diagnosis
    fits_all = "(fits " not in failure.diagnosis
    assert bool(failure.diagnosis_id) == fits_all, "a slip that fits every wrong case names itself in the report"
    assert failure.quiz == quiz
    assert failure.smallest.startswith(function + "(")
    assert all(other is None for other in results.values())  # only the broken function fails


def test_unknown_mistake_says_so_and_shows_the_smallest_case(tmp_path: Path) -> None:
    body = "def kv_cache_bytes(L, g, d, s, b, t):\n    return 2 * L * g * d * s * b * BYTES[t] + 1\n"
    failure = verdicts(mutant(tmp_path, "kv_cache_bytes", body))["kv-cache-bytes"]
    assert failure.diagnosis == "none of the classic slips gives these numbers"
    assert "Llama-3-8B" in failure.message  # named cases come first
    assert "returned 1,073,741,825, expected 1,073,741,824" in failure.message


def test_a_non_number_is_reported_as_such(tmp_path: Path) -> None:
    body = "def attention_flops(*args):\n    return '4 GFLOP'\n"
    failure = verdicts(mutant(tmp_path, "attention_flops", body))["attention-flops"]
    assert failure.message == "attention_flops returned str, not a number"


def test_random_cases_are_seeded_and_smallest_first() -> None:
    formula = exercise.FORMULAS[1]
    assert exercise.cases(formula, 3) == exercise.cases(formula, 3)
    assert exercise.cases(formula, 3) != exercise.cases(formula, 4)
    randoms = exercise.cases(formula, 3)[len(formula.named):]
    sizes = [math.prod(a for a in case.args if isinstance(a, int)) for case in randoms]
    assert sizes == sorted(sizes)


def test_named_cases_agree_with_the_presets() -> None:
    llama = budget.preset("Llama-3-8B")
    kv = exercise.FORMULAS[1].named[0].args
    assert kv[:3] == (llama.layers, llama.kv_heads, llama.head_dim)
    params = exercise.FORMULAS[2].named[0].args
    assert params[:3] == (llama.d_model, llama.heads, llama.kv_heads)


def test_stub_and_example_are_graded_end_to_end() -> None:
    from quizprep.grader.grade import GradeOptions, grade

    stub = Path(__file__).parents[2] / "exercises" / "budget.py"
    report = grade(stub, GradeOptions())
    assert not report.passed
    assert [c.message for c in report.checks[1:]] == ["not implemented yet (raises NotImplementedError)"] * 4
    assert grade(SOLUTION, GradeOptions()).passed
