"""The memory audit sees every new storage, ignores views, and tracks what is alive at once."""
from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from quizprep.grader.learner_side import memaudit  # noqa: E402
from quizprep.grader.learner_side.memaudit import audit  # noqa: E402


def test_views_and_in_place_ops_allocate_nothing() -> None:
    x = torch.randn(64, 32)

    def shuffle(x):
        y = x.view(32, 64).transpose(0, 1).expand(2, 64, 32)
        x.mul_(2)
        return y

    _, report = audit(shuffle, x)
    assert report.allocations == []
    assert report.total_bytes == 0 and report.peak_live_bytes == 0


def test_a_buffer_from_before_the_call_that_the_call_writes_counts_at_its_whole_size() -> None:
    """Third red team: all n × m scores written with out= into a buffer made at import allocated
    nothing during the call, and passed flash's memory check."""
    q, k = torch.randn(64, 8), torch.randn(96, 8)
    pool = torch.zeros(1 << 16)

    def scores_into_the_pool(q, k):
        scores = pool[: 64 * 96].view(64, 96)
        torch.matmul(q, k.T, out=scores)
        scores.exp_()
        return scores.sum(-1)

    _, report = audit(scores_into_the_pool, q, k)
    assert report.peak_live_bytes >= pool.nbytes
    assert [(a.op, a.shape) for a in report.holding(64, 96)] == [("mm", (64, 96))]


def test_records_each_allocation_with_op_shape_and_bytes() -> None:
    a = torch.randn(8, 16)
    _, report = audit(lambda: (a @ a.T).softmax(-1).to(torch.bfloat16))
    ops = [(x.op, x.shape, x.dtype, x.nbytes) for x in report.allocations]
    assert ("mm", (8, 8), "float32", 256) in ops
    assert ops[-1] == ("_to_copy", (8, 8), "bfloat16", 128)
    assert report.largest.nbytes == 256
    assert report.total_bytes == sum(x.nbytes for x in report.allocations)


def test_ops_taking_or_giving_lists_of_tensors_are_counted_by_storage() -> None:
    """Tensor[] arguments (cat, stack) and several results (split, unbind, max with indices): views of
    an input cost nothing, new storages count once each."""
    a, b = torch.randn(4, 8), torch.randn(4, 8)

    def lists():
        views = list(torch.split(a, 2)) + list(a.unbind(0))
        values, indices = torch.max(torch.cat([a, b]), dim=1)
        return views, torch.stack([a, b], dim=0), values, indices

    _, report = audit(lists)
    ops = sorted((x.op, x.shape, x.nbytes) for x in report.allocations)
    assert ops == [("cat", (8, 8), 256), ("max", (8,), 32), ("max", (8,), 64), ("stack", (2, 4, 8), 256)]


def test_peak_counts_only_what_is_alive_together() -> None:
    size = 256 * 256 * 4

    def chain():
        x = torch.ones(256, 256)
        for _ in range(5):
            x = x * 2  # each step frees the previous tensor
        return x

    _, report = audit(chain)
    assert report.total_bytes == 6 * size
    assert report.peak_live_bytes == 2 * size


def test_factory_functions_and_einsum_are_seen() -> None:
    q = torch.randn(2, 3, 10, 4)
    _, report = audit(lambda: torch.einsum("bhid,bhjd->bhij", q, q) + torch.zeros(10, 10))
    assert any(x.shape[-2:] == (10, 10) for x in report.allocations)
    assert report.holding(10, 10)


def test_holding_finds_an_n_by_m_matrix_in_any_two_dimensions() -> None:
    q = torch.randn(6, 12, 4)
    k = torch.randn(6, 20, 4)
    _, report = audit(lambda: torch.bmm(q, k.transpose(1, 2)))
    assert [a.shape for a in report.holding(12, 20)] == [(6, 12, 20)]
    assert report.holding(20, 20) == []
    assert report.at_least(6 * 12 * 20 * 4) and not report.at_least(6 * 12 * 20 * 4 + 1)


def test_to_dict_is_plain_data() -> None:
    _, report = audit(lambda: torch.ones(3, 5))
    data = report.to_dict()
    assert data["largest"]["shape"] == [3, 5]
    assert data["allocations"] == 1 and data["total_bytes"] == 60 and data["mode_removed"] is False


ROW = 64
LINES = Path(__file__).read_text().splitlines()


@pytest.mark.parametrize("fold", [
    lambda x: torch.logsumexp(x, -1), lambda x: x.max(-1).values, lambda x: x.sort(-1).values,
    lambda x: x.topk(1).values, lambda x: x @ torch.ones(ROW, dtype=x.dtype),
    lambda x: torch.einsum("rn,n->r", x, torch.ones(ROW, dtype=x.dtype)), lambda x: x.norm(dim=-1),
    lambda x: x.cumsum(-1),
    lambda x: torch.zeros(4, 1, dtype=x.dtype).scatter_add(1, torch.zeros(4, ROW, dtype=torch.long), x),
    lambda x: torch.nn.functional.conv1d(x[:, None], torch.ones(1, 1, ROW, dtype=x.dtype)),
], ids=["logsumexp", "max", "sort", "topk", "mv", "einsum", "norm", "cumsum", "scatter_add", "conv1d"])
def test_the_widest_fold_is_the_whole_row_however_the_row_is_reduced(fold) -> None:
    _, report = audit(fold, torch.randn(4, ROW, dtype=torch.float64))
    assert report.widest_fold[1] == ROW, report.widest_fold


def test_folds_chunk_by_chunk_and_merges_of_chunk_states_stay_narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.randn(4, ROW)

    def chunked(x):
        states = torch.stack([chunk.amax(-1) for chunk in x.split(8, -1)], -1)  # (4, 8): 8 chunk states
        return states.amax(-1), torch.maximum(x[:, :1], x), torch.isinf(x).sum(-1)

    monkeypatch.setattr(memaudit, "learner_path", __file__)
    _, report = audit(chunked, x)
    assert report.widest_fold == ("amax", 8)
    line = report.widest_fold_line[0]
    assert report.to_dict()["widest_fold"] == {"op": "amax", "values": 8, "line": line, "code": LINES[line - 1].strip()}
    assert "chunk.amax(-1)" in LINES[line - 1]  # the line that issued the widest fold


def test_notices_code_that_takes_the_audit_off_the_stack_for_good() -> None:
    from torch.utils._python_dispatch import _pop_mode

    def evade():
        _pop_mode()
        return torch.ones(100, 100)

    _, report = audit(evade)
    assert report.mode_removed
    assert report.allocations == []


@pytest.mark.cuda
def test_audit_on_cuda_matches_the_allocator() -> None:
    q = torch.randn(4, 8, 256, 64, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    _, report = audit(lambda: torch.softmax(q @ q.transpose(-1, -2), -1))
    assert report.largest.device.startswith("cuda")
    assert report.peak_live_bytes <= torch.cuda.max_memory_allocated() - before


def test_auditing_does_not_import_dynamo() -> None:
    """Importing torch._dynamo costs as much as importing torch: the audit must not pull it in."""
    import subprocess
    import sys

    code = ("import sys, torch\nfrom quizprep.grader.learner_side.memaudit import audit\n"
            "audit(lambda: torch.ones(4, 4) @ torch.ones(4, 4))\nprint('torch._dynamo' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
