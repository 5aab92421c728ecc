"""The `budget` exercise: four exact integer formulas for attention's memory and FLOPs.

Each check calls one learner function on named real models (configs cited in
:mod:`quizprep.budget`) and on seeded random cases, compares with :mod:`quizprep.budget`
in the grader's process, and on a mismatch tests the classic slips as hypotheses against
the learner's number: K and V not doubled, GQA ignored, wrong bytes per dtype, bits
for bytes, GB or GiB instead of bytes, MACs for FLOPs, causal as exactly half.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Callable

from quizprep import budget
from quizprep.grader.learner_side.protocol import kind_of
from quizprep.grader.spec import Check, CheckFailure, Diagnosis, ExerciseSpec

DTYPES = ("float32", "bfloat16", "float16", "float64", "int8")
WRONG_SIZES = {1, 2, 4, 8}

QUIZ_KV = "memory-kv-cache-k-and-v"
QUIZ_GQA = "gqa-kv-cache-savings"
QUIZ_DTYPE = "memory-bytes-per-dtype"
QUIZ_UNITS = "memory-gib-vs-gb"
QUIZ_FLOPS = "complexity-flops-vs-macs"


@dataclass(frozen=True)
class Case:
    title: str
    args: tuple[Any, ...]


@dataclass(frozen=True)
class Slip:
    """A classic mistake: what it would return for these arguments, and what to say."""

    predict: Callable[..., float | tuple[float, ...] | None]  # a tuple: the forms the slip takes
    diagnosis: str
    hint: str
    quiz: str
    id: str  # the report's diagnosis id, used when the slip fits every wrong case

    @property
    def named(self) -> Diagnosis:
        return Diagnosis(self.id, self.diagnosis, self.hint, self.quiz)


@dataclass(frozen=True)
class Formula:
    function: str
    title: str
    reference: Callable[..., int]
    named: tuple[Case, ...]
    random_args: Callable[[random.Random], tuple[Any, ...]]
    slips: tuple[Slip, ...]
    quiz: str


def _size(dtype: str) -> int:
    return budget.dtype_bytes(dtype)


def _unit_slips(reference: Callable[..., int]) -> tuple[Slip, ...]:
    return (
        Slip(lambda *a: reference(*a) / 2**30, "returned GiB (bytes / 2^30) instead of bytes",
             "Return plain bytes; convert only when you print.", QUIZ_UNITS,
             "gib-not-bytes"),
        Slip(lambda *a: reference(*a) / 1e9, "returned GB (bytes / 10^9) instead of bytes",
             "Return plain bytes; GB is 10^9 and GiB 2^30 — neither is asked for.", QUIZ_UNITS,
             "gb-not-bytes"),
        Slip(lambda *a: reference(*a) * 8, "counted bits, not bytes (8× too large)",
             "A bfloat16 element is 16 bits = 2 bytes.", QUIZ_DTYPE, "bits-not-bytes"),
    )


def _dtype_slips(reference: Callable[..., int], dtype_index: int) -> tuple[Slip, ...]:
    def with_size(size: int) -> Callable[..., float | None]:
        def predict(*args: Any) -> float | None:
            true_size = _size(args[dtype_index])
            return None if size == true_size else reference(*args) // true_size * size
        return predict

    return tuple(
        Slip(with_size(size), f"used {size} byte(s) per element whatever the dtype",
             "Bytes per element: float64 8, float32 4, bfloat16 and float16 2, int8 and fp8 1.",
             QUIZ_DTYPE, "fixed-dtype-size")
        for size in sorted(WRONG_SIZES)
    )


def _scores_random(rng: random.Random) -> tuple[Any, ...]:
    return (rng.randint(1, 16), rng.randint(1, 64), rng.randint(1, 8192), rng.randint(1, 8192),
            rng.choice(DTYPES))


def _kv_random(rng: random.Random) -> tuple[Any, ...]:
    return (rng.randint(1, 96), rng.choice((1, 2, 4, 8, 16)), rng.choice((64, 80, 96, 128, 256)),
            rng.randint(1, 32768), rng.randint(1, 32), rng.choice(DTYPES))


def _params_random(rng: random.Random) -> tuple[Any, ...]:
    kv_heads = rng.choice((1, 2, 4, 8))
    heads = kv_heads * rng.choice((1, 2, 4, 8))
    return (heads * rng.choice((32, 64, 128)), heads, kv_heads, rng.random() < 0.5)


def _softmax_counted(per_pair: int) -> Callable[..., int]:
    """The two matmuls plus `per_pair` FLOPs of softmax per attended pair (Chinchilla's table
    counts 3: exp, sum, divide; max and subtract make 5)."""
    def predict(batch: int, heads: int, n: int, m: int, d: int, causal: bool) -> int:
        matmuls = budget.attention_flops(batch, heads, n, m, d, causal)
        return matmuls + per_pair * matmuls // (4 * d)

    return predict


def _positions_counted(per_layer: bool) -> Callable[..., int]:
    """K and V plus an int64 position index per token and sequence (per layer, or once)."""
    def predict(layers: int, kv_heads: int, d: int, seq_len: int, batch: int, dtype: str) -> int:
        index = 8 * seq_len * batch * (layers if per_layer else 1)
        return budget.kv_cache_bytes(layers, kv_heads, d, seq_len, batch, dtype) + index

    return predict


def _flops_random(rng: random.Random) -> tuple[Any, ...]:
    n = rng.randint(1, 4096)
    m = n + rng.choice((0, 0, rng.randint(1, 4096)))
    return (rng.randint(1, 8), rng.randint(1, 64), n, m, rng.choice((64, 128)), rng.random() < 0.6)


def _gqa_ignored(d_model: int, heads: int, kv_heads: int, bias: bool) -> tuple[int, ...] | None:
    """W_k and W_v d_model × d_model (the multi-head 4·d_model² weights), the biases counted as multi-head
    attention's too or at their GQA widths: code that counts the weights and the biases apart."""
    if kv_heads == heads:
        return None
    gqa_biases = budget.attention_params(d_model, heads, kv_heads, bias) - budget.attention_params(
        d_model, heads, kv_heads, False)
    return budget.attention_params(d_model, heads, heads, bias), 4 * d_model * d_model + gqa_biases


def _no_head_split(d_model: int, heads: int, kv_heads: int, bias: bool) -> int | None:
    if kv_heads == heads:
        return None
    kv_width = kv_heads * d_model
    return 2 * d_model * d_model + 2 * d_model * kv_width + (2 * d_model + 2 * kv_width if bias else 0)


def _biases_full_width(d_model: int, heads: int, kv_heads: int, bias: bool) -> int | None:
    """The weights sized for GQA, the biases still counted as multi-head attention's 4·d_model."""
    if not bias or kv_heads == heads:
        return None
    return budget.attention_params(d_model, heads, kv_heads, False) + 4 * d_model


def _exact_half(batch: int, heads: int, n: int, m: int, d: int, causal: bool) -> float | None:
    return 2 * batch * heads * n * m * d if causal else None


def _top_left(batch: int, heads: int, n: int, m: int, d: int, causal: bool) -> int | None:
    if not causal or m == n:
        return None
    pairs = sum(min(i + 1, m) for i in range(n))  # query i sees keys 0..i, ignoring the cache
    return 4 * batch * heads * d * pairs


def _causal_no_diagonal(batch: int, heads: int, n: int, m: int, d: int, causal: bool) -> int | None:
    if not causal:
        return None
    pairs = n * (m - n) + n * (n - 1) // 2  # query i sees the m − n cached keys and the i before it
    return 4 * batch * heads * d * pairs


def _causal_ignored(batch: int, heads: int, n: int, m: int, d: int, causal: bool) -> int | None:
    return 4 * batch * heads * n * m * d if causal else None


FORMULAS = (
    Formula(
        function="attention_scores_bytes",
        title="score-matrix bytes: B·H·n·m·bytes",
        reference=budget.attention_scores_bytes,
        named=(
            Case("Llama-3-8B, one layer, 8192-token prompt, bf16", (1, 32, 8192, 8192, "bfloat16")),
            Case("GPT-2, batch 8 of 1024 tokens, fp32", (8, 12, 1024, 1024, "float32")),
            Case("cross-attention: 128 queries over 4096 keys, fp16", (2, 16, 128, 4096, "float16")),
        ),
        random_args=_scores_random,
        slips=(
            *_unit_slips(budget.attention_scores_bytes),
            *_dtype_slips(budget.attention_scores_bytes, 4),
            Slip(lambda b, h, n, m, t: None if n == m else b * h * n * n * _size(t),
                 "used n × n: the score matrix is n queries × m keys", "Q·Kᵀ is (n, d)·(d, m).",
                 QUIZ_DTYPE, "scores-n-by-n"),
            Slip(lambda b, h, n, m, t: None if b == 1 else h * n * m * _size(t),
                 "left out the batch dimension", "Every sequence in the batch has its own scores.",
                 QUIZ_DTYPE, "scores-no-batch"),
            Slip(lambda b, h, n, m, t: None if h == 1 else b * n * m * _size(t),
                 "left out the heads: each head has its own n×m scores",
                 "Multi-head attention computes one score matrix per head.", QUIZ_DTYPE, "scores-no-heads"),
        ),
        quiz=QUIZ_DTYPE,
    ),
    Formula(
        function="kv_cache_bytes",
        title="KV-cache bytes: 2·L·G·d·N·B·bytes",
        reference=budget.kv_cache_bytes,
        named=(
            Case("Llama-3-8B (32 layers, 8 KV heads of 128), 8192 tokens, bf16", (32, 8, 128, 8192, 1, "bfloat16")),
            Case("Llama-3-70B (80 layers, 8 KV heads of 128), 8192 tokens, bf16", (80, 8, 128, 8192, 1, "bfloat16")),
            Case("Mistral-7B (32 layers, 8 KV heads of 128), batch 4 × 4096 tokens, bf16",
                 (32, 8, 128, 4096, 4, "bfloat16")),
            Case("GPT-2 (12 layers, 12 heads of 64), 1024 tokens, fp32", (12, 12, 64, 1024, 1, "float32")),
        ),
        random_args=_kv_random,
        slips=(
            Slip(lambda *a: budget.kv_cache_bytes(*a) // 2, "forgot the factor 2: the cache holds K *and* V",
                 "Per token and layer, each KV head stores a key vector and a value vector.", QUIZ_KV,
                 "kv-no-factor-two"),
            Slip(lambda *a: budget.kv_cache_bytes(*a) * 2, "counted 4 tensors per layer; K and V are 2",
                 "Q is never cached: only K and V are reused by later tokens.", QUIZ_KV, "kv-four-tensors"),
            *_unit_slips(budget.kv_cache_bytes),
            *_dtype_slips(budget.kv_cache_bytes, 5),
            Slip(lambda L, g, d, s, b, t: None if b == 1 else budget.kv_cache_bytes(L, g, d, s, 1, t),
                 "left out the batch: every sequence has its own cache",
                 "Multiply by the batch size.", QUIZ_KV, "kv-no-batch"),
            Slip(lambda L, g, d, s, b, t: None if L == 1 else budget.kv_cache_bytes(1, g, d, s, b, t),
                 "counted one layer: every layer has its own K and V", "Multiply by the layers.", QUIZ_KV,
                 "kv-one-layer"),
            *(Slip(_positions_counted(per_layer), "counted an int64 position index (8 bytes per token and "
                   "sequence) into the cache: it is one implementation's bookkeeping, not K or V",
                   "The formula is K and V only: 2 · layers · kv_heads · head_dim · tokens · batch · bytes.",
                   QUIZ_KV, "kv-position-buffer") for per_layer in (False, True)),
        ),
        quiz=QUIZ_KV,
    ),
    Formula(
        function="attention_params",
        title="attention parameters with GQA",
        reference=budget.attention_params,
        named=(
            Case("Llama-3-8B: d_model 4096, 32 query heads, 8 KV heads, no bias", (4096, 32, 8, False)),
            Case("Llama-3-70B: d_model 8192, 64 query heads, 8 KV heads, no bias", (8192, 64, 8, False)),
            Case("GPT-2: d_model 768, 12 heads, with biases", (768, 12, 12, True)),
        ),
        random_args=_params_random,
        slips=(
            Slip(_gqa_ignored, "ignored GQA: sized W_k and W_v for every query head (d_model × d_model)",
                 "With n_kv_heads KV heads, W_k and W_v map d_model to n_kv_heads·d_head only.", QUIZ_GQA,
                 "params-gqa-ignored"),
            Slip(_no_head_split, "sized W_k and W_v as n_kv_heads·d_model instead of n_kv_heads·d_head",
                 "d_head = d_model // n_heads; a KV head is d_head wide.", QUIZ_GQA, "params-kv-width-d-model"),
            Slip(lambda d, h, g, b: budget.attention_params(d, h, g, not b),
                 "biases the wrong way round: counted them without bias, or left them out with it",
                 "bias=True adds one vector per projection: n_heads·d_head + 2·n_kv_heads·d_head + d_model.",
                 QUIZ_GQA, "params-bias-inverted"),
            Slip(_biases_full_width, "counted every bias d_model wide (4·d_model, the multi-head count): with GQA "
                 "the K and V biases are n_kv_heads·d_head wide", "A bias is as wide as its projection's output: "
                 "n_heads·d_head + 2·n_kv_heads·d_head + d_model in all.", QUIZ_GQA, "params-bias-full-width"),
            Slip(lambda d, h, g, b: budget.attention_params(d, h, g, b) - d * d - (d if b else 0),
                 "left out the output projection W_o", "Attention ends with W_o: d_model × d_model.", QUIZ_GQA,
                 "params-no-output-projection"),
        ),
        quiz=QUIZ_GQA,
    ),
    Formula(
        function="attention_flops",
        title="attention FLOPs: 4·B·H·n·m·d, causal pairs only",
        reference=budget.attention_flops,
        named=(
            Case("GPT-2 layer, 1024 tokens, full attention", (1, 12, 1024, 1024, 64, False)),
            Case("Llama-3-8B layer, 8192-token causal prompt", (1, 32, 8192, 8192, 128, True)),
            Case("Llama-3-8B layer, decoding 1 token against 8192 cached", (1, 32, 1, 8192, 128, True)),
            Case("causal with a cache: 4 new tokens after 60 cached", (2, 4, 4, 64, 64, True)),
        ),
        random_args=_flops_random,
        slips=(
            Slip(lambda *a: budget.attention_flops(*a) / 2,
                 "counted multiply-adds (MACs), or only one of the two matmuls: half the FLOPs",
                 "One multiply-add is 2 FLOPs, and there are two matmuls: Q·Kᵀ and P·V.", QUIZ_FLOPS, "flops-macs"),
            Slip(lambda *a: budget.attention_flops(*a) * 2, "counted 4 FLOPs per multiply-add, or the backward pass",
                 "Forward only, 2 FLOPs per multiply-add.", QUIZ_FLOPS, "flops-doubled"),
            Slip(_exact_half, "took causal as exactly half of n·m; the diagonal is attended too",
                 "With n = m there are n(n+1)/2 allowed pairs, not n²/2.", QUIZ_FLOPS, "causal-exact-half"),
            Slip(_causal_no_diagonal, "counted the causal pairs without the diagonal: a query attends to its own key",
                 "Query i (0-based) sees m − n + i + 1 keys, itself included: n(n+1)/2 pairs when n = m, not "
                 "n(n−1)/2.", QUIZ_FLOPS, "causal-flops-no-diagonal"),
            Slip(_causal_ignored, "ignored causal: counted every (query, key) pair",
                 "A causal query attends only the keys at or before its position.", QUIZ_FLOPS, "causal-ignored"),
            Slip(_top_left, "aligned the causal mask top-left: with a cache, the queries are the last n positions",
                 "Query i (0-based) sees m - n + i + 1 keys when m ≥ n.", QUIZ_FLOPS, "causal-top-left"),
            *(Slip(_softmax_counted(per_pair), f"counted the softmax ({per_pair} FLOPs per attended pair) on top "
                   "of the two matmuls", "Count Q·Kᵀ and P·V only: the softmax, scaling and masking are "
                   "O(n·m), a factor d smaller, and the exercise leaves them out.", QUIZ_FLOPS,
                   "flops-softmax-counted") for per_pair in range(1, 6)),
        ),
        quiz=QUIZ_FLOPS,
    ),
)

RANDOM_CASES = 24


def _describe(function: str, args: tuple[Any, ...]) -> str:
    return f"{function}({', '.join(repr(a) for a in args)})"


def _matches(value: Any, predicted: float | tuple[float, ...] | None) -> bool:
    if predicted is None or not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    forms = predicted if isinstance(predicted, tuple) else (predicted,)
    return any(math.isclose(value, form, rel_tol=1e-9, abs_tol=1e-12) for form in forms)


def _exact(value: Any, expected: int) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == expected


def diagnose(formula: Formula, failures: list[tuple[Case, Any]]) -> tuple[Slip | None, int]:
    """The classic slip that predicts the learner's number on the most failing cases.

    Judging on every failure, not the first, separates slips that agree on one case (4
    bytes per bf16 element and "K, V, and two more" are both ×2 in bf16, not in fp32).
    """
    best, best_count = None, 0
    for slip in formula.slips:
        count = sum(_matches(value, slip.predict(*case.args)) for case, value in failures)
        if count > best_count:
            best, best_count = slip, count
    return best, best_count


def cases(formula: Formula, seed: int) -> list[Case]:
    rng = random.Random(f"{formula.function}:{seed}")
    randoms = [Case("a random case", formula.random_args(rng)) for _ in range(RANDOM_CASES)]
    # Smallest first, so the first random failure reported is the smallest one.
    randoms.sort(key=lambda case: math.prod(a for a in case.args if isinstance(a, int) and not isinstance(a, bool)))
    return [*formula.named, *randoms]


def check_formula(formula: Formula, call: Callable[..., Any], seed: int) -> str:
    """Raise CheckFailure naming the first wrong named case (else the smallest random one)."""
    failures: list[tuple[Case, Any]] = []
    for case in cases(formula, seed):
        value = call(formula.function, *case.args)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise CheckFailure(
                f"{formula.function} returned {kind_of(value)}, not a number",
                tried=case.title, smallest=_describe(formula.function, case.args),
                hint="Return an int number of bytes or FLOPs.", quiz=formula.quiz,
            )
        if not _exact(value, formula.reference(*case.args)):
            failures.append((case, value))
    if not failures:
        return f"{len(formula.named)} named and {RANDOM_CASES} random cases exact"
    case, value = failures[0]
    expected = formula.reference(*case.args)
    slip, matched = diagnose(formula, failures)
    tried = f"{len(formula.named)} named real cases and {RANDOM_CASES} random ones; {len(failures)} wrong"
    message = f"{formula.function} is wrong on {case.title}: returned {value:,}, expected {expected:,}"
    where = f"off by a factor of {value / expected:.4g}" if expected else ""
    smallest = _describe(formula.function, case.args)
    if slip is None:
        raise CheckFailure(message, tried=tried, smallest=smallest, where=where,
                           diagnosis="none of the classic slips gives these numbers",
                           hint="Write the formula out with every factor named.", quiz=formula.quiz)
    if matched < len(failures):  # a likely cause, not a name: it leaves some wrong cases unexplained
        raise CheckFailure(message, tried=tried, smallest=smallest, where=where,
                           diagnosis=f"{slip.diagnosis} (fits {matched} of the {len(failures)} wrong cases)",
                           hint=slip.hint, quiz=slip.quiz)
    raise CheckFailure(message, tried=tried, smallest=smallest, where=where, named=slip.named)


def _check(formula: Formula) -> Check:
    def run(ctx: Any) -> str:
        return check_formula(formula, lambda name, *args: ctx.call(name, *args).value, ctx.seed)

    return Check(id=formula.function.replace("_", "-"), title=formula.title, run=run)


# The real-world use each check stands for.
USAGE = {
    "attention-scores-bytes": "sizing the n × m score matrix a naive kernel materialises",
    "kv-cache-bytes": "capacity planning for serving: the KV cache of real model configs",
    "attention-params": "checkpoint sizes of GQA layers (Llama 3, GPT-2)",
    "attention-flops": "roofline and MFU estimates: forward FLOPs, causal pairs only",
}

SPEC = ExerciseSpec(
    name="budget",
    title="Memory and FLOP budget of attention",
    entry_points=tuple(formula.function for formula in FORMULAS),
    lessons=("memory-kv-cache-k-and-v", "gqa-kv-cache-savings", "memory-bytes-per-dtype", "memory-gib-vs-gb",
             "complexity-flops-vs-macs"),
    checks=tuple(_check(formula) for formula in FORMULAS),
)
