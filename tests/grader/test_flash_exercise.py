"""The flash exercise's own machinery: the tiled simulation and the memory verdict."""
from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from quizprep.grader.exercises import _flash_mistakes, flash  # noqa: E402
from quizprep.grader.spec import CheckFailure  # noqa: E402


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block", [1, 4, 7, 64])
def test_the_slip_free_simulation_is_exact_attention(causal: bool, block: int) -> None:
    case = flash.build(flash._sizes((2,), 6, 11, 5, 3, block), {"dtype": torch.float64, "causal": causal}, 3)
    assert torch.allclose(_flash_mistakes.tiled(case)["out"], case.expected["out"], atol=1e-12)


def test_each_slip_differs_from_the_reference_once_blocks_split_the_keys() -> None:
    case = flash.build(flash._sizes((2,), 9, 23, 5, 3, 4), {"dtype": torch.float64, "causal": True,
                                                            "logits": "peaky"}, 5)
    for hypothesis in _flash_mistakes.HYPOTHESES[:3]:
        assert all(not torch.allclose(form["out"], case.expected["out"], equal_nan=True)
                   for form in hypothesis.forms(case)), hypothesis.id


def _audit_case():
    return flash.build(flash.AUDIT_SIZES, {"dtype": torch.float32, "causal": True}, 0)


def test_memory_verdict_names_a_score_sized_allocation() -> None:
    case = _audit_case()
    n, m = flash.AUDIT_SIZES["n"], flash.AUDIT_SIZES["m"]
    memory = {"peak_live_bytes": 10, "mode_removed": False,
              "largest": [{"op": "bmm", "shape": [2, m, n], "nbytes": 2 * n * m * 4}]}
    with pytest.raises(CheckFailure) as failure:
        flash.judge_memory(memory, case)
    assert failure.value.diagnosis_id == "flash-materialised-scores" and f"2×{m}×{n}" in failure.value.message


def test_memory_verdict_counts_tiles_kept_alive_together() -> None:
    case = _audit_case()
    n, m, block = (flash.AUDIT_SIZES[key] for key in ("n", "m", "block"))
    full = math.prod(flash._lead(flash.AUDIT_SIZES)) * n * m * 4
    tiles = [{"op": "bmm", "shape": [2, n, block], "nbytes": 2 * n * block * 4}]
    assert "peak" in flash.judge_memory({"peak_live_bytes": full - 1, "mode_removed": False, "largest": tiles}, case)
    with pytest.raises(CheckFailure, match="at least the"):
        flash.judge_memory({"peak_live_bytes": full, "mode_removed": False, "largest": tiles}, case)
    with pytest.raises(CheckFailure, match="removed the grader's memory audit"):
        flash.judge_memory({"peak_live_bytes": 0, "mode_removed": True, "largest": []}, case)


def test_memory_that_grows_as_the_block_shrinks_is_partials_kept() -> None:
    """Issue 31: a tiled loop that stacks every block's partial output passed at one block size."""
    cases = [flash.build(sizes, {"dtype": torch.float32, "causal": True}, 0) for sizes in flash.GROWTH_SIZES]
    n, m, dv = (flash.GROWTH_SIZES[0][key] for key in ("n", "m", "dv"))
    partial = 2 * n * dv * 4
    blocks = [-(-m // sizes["block"]) for sizes in flash.GROWTH_SIZES]

    def audit(peak: int) -> dict:
        return {"peak_live_bytes": peak, "mode_removed": False, "largest": []}

    growth = ((audit(blocks[0] * partial), cases[0]), (audit(blocks[1] * partial), cases[1]))
    with pytest.raises(CheckFailure) as failure:
        flash.judge_memory(audit(150_000), _audit_case(), growth=growth)
    assert failure.value.diagnosis_id == "flash-partials-kept" and "block_size=8" in failure.value.message
    flat = ((audit(9_000), cases[0]), (audit(8_000), cases[1]))  # a flash loop: smaller blocks, smaller tiles
    assert "peak" in flash.judge_memory(audit(150_000), _audit_case(), growth=flat)


def test_the_worker_runs_the_learner_under_the_audit(tmp_path) -> None:
    from quizprep.grader.worker_session import WorkerSession

    path = tmp_path / "scores.py"
    path.write_text("import torch\n\ndef f(a, b):\n    return (a @ b.T).exp()\n")
    session = WorkerSession(path)
    try:
        session.start()
        response = session.request({"op": "call", "target": "f", "args": [torch.ones(3, 2), torch.ones(5, 2)],
                                    "kwargs": {}, "memory_audit": True, "device": "cpu"})
    finally:
        session.close()
    assert [a["shape"] for a in response["memory"]["largest"]] == [[3, 5], [3, 5]]
    assert response["memory"]["peak_live_bytes"] >= 3 * 5 * 4 and not response["memory"]["mode_removed"]


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["flash", "online_softmax", "kv_cache", "sliding_window"])
def test_example_solutions_pass_on_cuda(name: str) -> None:
    """Ready for a GPU machine: the checks (the memory audit included) on CUDA tensors."""
    from pathlib import Path

    from quizprep.grader.grade import GradeOptions, grade

    solution = Path(__file__).parents[1] / "solutions" / f"{name}.py"
    report = grade(solution, GradeOptions(device="cuda"))
    failing = [(c.id, c.message) for c in report.checks if c.status != "pass"]
    assert report.passed and not failing, failing
