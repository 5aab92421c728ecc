"""The topics issue 33 adds from what 2026 interviews ask (learned sinks and gated attention in
beyond_softmax.yaml, KV shared across layers in kv_shrink.yaml; new banks would crowd Home at
80×24): each ships every kind of question, cites primary sources, and keeps its numbers
consistent with the configs it names."""
from __future__ import annotations

import math

import pytest

from quizprep.bank import ChoiceQuestion, FreeQuestion, NumericQuestion, load_banks
from quizprep.bank.numeric import evaluate_draw

PREFIXES = ["gate-", "kvshare-"]


@pytest.fixture(scope="module")
def by_id() -> dict[str, object]:
    result = load_banks()
    assert [str(error) for error in result.errors] == []
    return {q.id: q for q in result.questions}


@pytest.mark.parametrize("prefix", PREFIXES)
def test_topic_has_every_kind_with_a_worked_formula(by_id, prefix: str) -> None:
    questions = [q for qid, q in by_id.items() if qid.startswith(prefix)]
    choices = [q for q in questions if isinstance(q, ChoiceQuestion)]
    assert any(not q.multiple for q in choices) and any(q.multiple for q in choices)
    numeric = [q for q in questions if isinstance(q, NumericQuestion)]
    assert len(numeric) >= 2 and all(q.generated and q.wrong_answers and q.derived for q in numeric)
    assert any(isinstance(q, FreeQuestion) and len(q.rubric) >= 4 for q in questions)
    assert all(q.references for q in questions)  # type: ignore[attr-defined]


def _answer(question: NumericQuestion, **params: float) -> float:
    assert question.answer is not None
    return float(evaluate_draw(question.derived, question.answer, params)["answer"])


def test_sink_weight_matches_the_softmax_with_a_dropped_column(by_id) -> None:
    question = by_id["gate-sink-weight"]
    for s, n in [(1, 1), (3, 128)]:
        row = [0.0] * n + [float(s)]
        total = sum(math.exp(x) for x in row)
        assert _answer(question, s=s, n=n) == pytest.approx(sum(math.exp(x) for x in row[:-1]) / total)


def test_gate_params_for_qwen3_next_are_one_w_q_per_full_attention_layer(by_id) -> None:
    # Qwen3-Next-80B-A3B: 12 of 48 layers are full attention; q_proj returns 2 × 16 × 256 outputs,
    # half of them the gate, from a 2048-wide hidden state.
    qwen = dict(layers=48, interval=4, hidden=2048, heads=16, head_dim=256)
    assert _answer(by_id["gate-gate-params"], **qwen) == 12 * 2048 * 16 * 256


def test_yoco_keeps_one_global_cache_and_the_windows(by_id) -> None:
    kept = _answer(by_id["kvshare-yoco-fraction"], layers=32, window=1024, n=32768)
    assert kept == pytest.approx((32768 + 16 * 1024) / (32 * 32768))
