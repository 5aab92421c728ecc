"""Facts the issue-33 audit doubted, pinned where a test can tell: a claim about torch that
torch itself can confirm, a figure that follows from the `budget` preset, a key whose correct
options must not contradict each other."""
from __future__ import annotations

import pytest

from quizprep import budget
from quizprep.bank import ChoiceQuestion, FreeQuestion, NumericQuestion, load_banks
from quizprep.bank.audit import audited_draws
from quizprep.bank.cues import stated_numbers


@pytest.fixture(scope="module")
def questions() -> dict[str, object]:
    return {q.id: q for q in load_banks().questions}


def _all_text(question: object) -> str:
    parts = [question.prompt, question.explanation, *question.references]  # type: ignore[attr-defined]
    if isinstance(question, ChoiceQuestion):
        parts += [part for choice in question.choices for part in (choice.text, choice.why)]
    if isinstance(question, FreeQuestion):
        parts += [question.model_answer, *(item.criterion for item in question.rubric)]
    return " ".join(parts)


def test_the_cpu_path_still_accepts_a_mask_with_is_causal_so_no_bank_calls_the_bug_fixed(questions) -> None:
    torch = pytest.importorskip("torch")
    q = torch.randn(1, 1, 3, 4)
    mask = torch.ones(3, 3, dtype=torch.bool)
    # The banks say PyTorch's default CPU path accepts the pair the docs call an error.
    torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask, is_causal=True)
    citing = [qid for qid, question in questions.items() if "187801" in _all_text(question)]
    assert citing
    for qid in citing:
        assert "fixed upstream" not in _all_text(questions[qid]), qid
        assert "fixed by making every backend raise" not in _all_text(questions[qid]), qid


def test_mla_cache_is_stated_as_the_gqa_it_equals(questions) -> None:
    # 576 cached elements are a key and a value for 2.25 KV heads of 128, not "between G = 1 and 3".
    v3, llama = budget.preset("deepseek-v3"), budget.preset("llama-3.1-70b")
    equivalent_kv_heads = v3.kv_elements_per_layer / (2 * llama.head_dim)
    assert equivalent_kv_heads == 2.25
    assert f"GQA with {equivalent_kv_heads:g} KV heads" in questions["mla-tradeoffs"].explanation


def test_position_rope_scale_keeps_the_default_scale_only_without_context_extension(questions) -> None:
    question = questions["position-rope-scale"]
    assert isinstance(question, ChoiceQuestion) and question.multiple
    correct = [c.text for c in question.choices if c.correct]
    default_scale = [text for text in correct if "default" in text]
    yarn = [text for text in correct if "YaRN" in text]
    # Both are right only because the first is limited to a model run without extension.
    assert len(default_scale) == 1 and len(yarn) == 1
    assert default_scale[0].startswith("Without context extension")


def test_cudnn_ahead_of_flash_is_tied_to_a_torch_version(questions) -> None:
    for qid, question in questions.items():
        text = _all_text(question)
        if "cuDNN attention before flash" in text or "ahead of flash" in text:
            assert "2.11" in text, qid


def test_no_draw_of_a_numeric_predecessor_is_its_followers_key(questions) -> None:
    # multihead-param-count drew d_model = 512 (1,050,624, the answer of the nn.MultiheadAttention
    # question after it) and numerics-count-stall drew m = 10 (2048, the fp16 count that follows).
    numeric = [q for q in questions.values() if isinstance(q, NumericQuestion)]
    draws = audited_draws(numeric)
    given = []
    for predecessor in numeric:
        for follower_id in predecessor.chain:
            follower = questions[follower_id]
            if not isinstance(follower, ChoiceQuestion):
                continue
            keys = " ".join(c.text for c in follower.choices if c.correct)
            stated = {number for number, _ in stated_numbers(keys) if number > 10}
            given += [(predecessor.id, follower_id) for env in draws.get(predecessor.id, [])
                      if float(env["answer"]) in stated]
    assert given == []
