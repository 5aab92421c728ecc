"""The worker's start-up (torch imported and warmed up) runs with the collector off, and only
the start-up: the learner's code runs with Python's usual collection."""
from __future__ import annotations

import gc

import pytest
import torch

from quizprep.grader.learner_side import torch_start
from quizprep.grader.worker_session import WorkerSession


def test_the_collector_is_off_inside_and_back_on_after_even_when_it_raises():
    with pytest.raises(RuntimeError), torch_start.collection_paused():
        assert not gc.isenabled()
        raise RuntimeError("start-up failed")
    assert gc.isenabled()


def test_the_learners_code_runs_with_the_collector_on(tmp_path):
    path = tmp_path / "collecting.py"
    path.write_text("import gc\nimport torch\n\nAT_LOAD = gc.isenabled()\n\n"
                    "def collecting(x):\n    return torch.tensor([AT_LOAD, gc.isenabled()])\n")
    with WorkerSession(path, forbidden=()) as session:
        session.start()
        reply = session.request({"op": "call", "target": "collecting", "args": [torch.ones(1)]})
    assert reply["value"].tolist() == [True, True]  # at load and in a call
