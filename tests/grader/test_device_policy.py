"""The device policy (quizprep.grader.device): where checks run, the `device` check that names
device-placement bugs with file:line on every machine (inputs on the meta device), and the CUDA
paths, which run only where there is a GPU."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from conftest import HERE, SOLUTIONS, expectation
from quizprep.grader import device
from quizprep.grader.learner_side import torch_start
from quizprep.grader.device import DeviceUnavailable, decide, placement
from quizprep.grader.exercises import available, load_spec

DEVICE_MUTANTS = sorted((HERE / "device_mutants").glob("*.py"))
DEVICE_AWARE = [HERE / "variants" / name for name in
                ("softmax_device_aware.py", "flash_query_tiles.py", "kv_cache_grouped_einsum.py",
                 "online_softmax_logsumexp.py")] + [SOLUTIONS / "masking.py", SOLUTIONS / "mha.py",
                                                     HERE / "public" / "paged_decode_vllm_reference_pass.py"]


@pytest.mark.parametrize(("requested", "cuda", "numpy_track", "checks", "probes", "perf"), [
    ("auto", False, False, "cpu", ("meta",), "cpu"),
    ("auto", True, False, "cpu", ("meta", "cuda"), "cuda"),
    ("cpu", True, False, "cpu", ("meta",), "cpu"),
    ("cuda", True, False, "cuda", ("meta", "cuda"), "cuda"),
    ("auto", True, True, "cpu", (), "cpu"),
    ("cuda", True, True, "cpu", (), "cpu"),
])
def test_policy(requested, cuda, numpy_track, checks, probes, perf):
    policy = decide(requested, cuda=cuda, numpy_track=numpy_track)
    assert (policy.checks, policy.probes, policy.perf) == (checks, probes, perf)


@pytest.mark.parametrize("numpy_track", [False, True])
def test_cuda_asked_for_without_one_is_refused_whatever_the_track(numpy_track):
    with pytest.raises(DeviceUnavailable, match="--device cuda"):
        decide("cuda", cuda=False, numpy_track=numpy_track)


@pytest.mark.parametrize(("message", "code", "named"), [
    ("RuntimeError: Tensor on device meta is not on the expected device cpu!", "s.masked_fill(m, 0)",
     "device-tensor-without-device"),
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
     "x + torch.arange(n)", "device-tensor-without-device"),
    ("TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() first.", "x.numpy()",
     "device-numpy"),
    ("TypeError: can't convert meta device type tensor to numpy.", "x.numpy()", "device-numpy"),
    ("AssertionError: Torch not compiled with CUDA enabled", "x = x.cuda()", "device-hard-coded-cuda"),
    ("NotImplementedError: Cannot copy out of meta tensor; no data!", "x = x.cuda()", "device-hard-coded-cuda"),
    ("NotImplementedError: Cannot copy out of meta tensor; no data!", "return out.cpu()", "device-hard-coded-cpu"),
    ("RuntimeError: Tensor.item() cannot be called on meta tensors", "if m.any():", None),
    # An index tensor's values read on the host (vLLM's block table) are correct on any real device.
    ("NotImplementedError: Cannot copy out of meta tensor; no data!", "tables = block_tables.cpu().tolist()", None),
    ("NotImplementedError: Cannot copy out of meta tensor; no data!", "for n in seq_lens.tolist():", None),
    ("NotImplementedError: Cannot copy out of meta tensor; no data!", "last = int(lengths.cpu()[-1])", None),
    ("NotImplementedError: Cannot copy out of meta tensor; no data!", "out = out.cpu() + b", "device-hard-coded-cpu"),
    ("RuntimeError: The size of tensor a (5) must match the size of tensor b (6)", "x + y", None),
])
def test_placement_is_read_from_the_error_and_its_line(message, code, named):
    found = placement(message, code)
    assert (found.id if found else None) == named


def test_each_process_gets_a_share_of_the_gpu(monkeypatch):
    monkeypatch.delenv("QUIZPREP_GPU_MEMORY_FRACTION", raising=False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "16")
    assert device.gpu_memory_share() == pytest.approx(device.GPU_MEMORY_IN_USE / 16)
    monkeypatch.setenv("QUIZPREP_GPU_MEMORY_FRACTION", "0.25")
    assert device.gpu_memory_share() == 0.25


@pytest.mark.parametrize("path", DEVICE_MUTANTS, ids=[p.stem for p in DEVICE_MUTANTS])
def test_device_placement_bug_is_named_with_its_line(path: Path, grade_file):
    check_id, diagnosis = expectation(path)
    report = grade_file(path, only=(check_id,))
    result = next(c for c in report.checks if c.id == check_id)
    assert result.status == "fail", result.message
    assert result.diagnosis_id == diagnosis, result.message
    line = re.match(rf"{re.escape(str(path.resolve()))}:(\d+) ", result.where)
    assert line, result.where
    assert result.hint and not report.passed


@pytest.mark.parametrize("path", DEVICE_AWARE, ids=[p.stem for p in DEVICE_AWARE])
def test_code_that_follows_its_inputs_passes(path: Path, grade_file):
    report = grade_file(path, only=("device",))
    result = next(c for c in report.checks if c.id == "device")
    assert result.status == "pass", (result.message, result.where)


def test_grade_reports_its_device_policy(grade_file):
    report = grade_file(SOLUTIONS / "softmax.py", only=("device",))
    policy = report.environment["device_policy"]
    assert policy["checks"] == report.environment["device"] == "cpu"
    assert policy["probes"][0] == "meta"


def test_the_numpy_track_runs_on_the_cpu_only(grade_file):
    report = grade_file(SOLUTIONS / "softmax_numpy.py", only=("device",))
    assert not report.environment["device_policy"]["probes"]
    assert not [c for c in report.checks if c.id == "device"]


def test_a_fork_server_leaves_cuda_to_its_children(monkeypatch):
    """On a CUDA build autograd's first run counts the GPUs and starts device threads, after which
    forked children can use neither CUDA nor autograd: the server must warm up without it."""
    def no_autograd(*args, **kwargs):
        raise AssertionError("autograd ran before fork")

    monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: True)
    monkeypatch.setattr(torch.autograd, "grad", no_autograd)
    torch_start.import_torch(1, before_fork=True)
    assert not torch.cuda.is_initialized()
    with pytest.raises(AssertionError, match="autograd ran before fork"):
        torch_start.import_torch(1)


# ---- on a GPU ----------------------------------------------------------------------------------
MUTANTS_THAT_LOST_THEIR_NAMES_ON_CUDA = ("flash_no_rescale", "flash_causal_no_offset", "kv_cache_mask_no_offset",
                                         "masking_padding_inverted", "softmax_no_keepdim", "sliding_window_narrow")


@pytest.mark.cuda
@pytest.mark.parametrize("stem", MUTANTS_THAT_LOST_THEIR_NAMES_ON_CUDA)
def test_cuda_gives_the_cpu_names(stem: str):
    from quizprep.grader.grade import GradeOptions, grade

    path = HERE / "mutants" / f"{stem}.py"
    check_id, diagnosis = expectation(path)
    report = grade(path, GradeOptions(device="cuda", only=(check_id,)))
    result = next(c for c in report.checks if c.id == check_id)
    assert (result.status, result.diagnosis_id) == ("fail", diagnosis), result.message


@pytest.mark.cuda
@pytest.mark.parametrize("path", DEVICE_AWARE + [SOLUTIONS / "attention.py"], ids=lambda p: p.stem)
def test_correct_code_passes_every_check_on_cuda(path: Path):
    from quizprep.grader.grade import GradeOptions, grade

    report = grade(path, GradeOptions(device="cuda"))
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status != "pass"]


@pytest.mark.cuda
def test_auto_checks_on_the_cpu_and_probes_the_gpu():
    from quizprep.grader.grade import GradeOptions, grade

    report = grade(HERE / "device_mutants" / "flash_full_without_device.py", GradeOptions())
    assert list(report.environment["device_policy"]["probes"]) == ["meta", "cuda"]
    failing = [(c.id, c.diagnosis_id) for c in report.checks if c.status != "pass"]
    assert failing == [("device", "device-tensor-without-device")]


def test_the_placement_probe_runs_every_check_but_those_left_out_of_it():
    from quizprep.grader.device_check import probe
    from quizprep.grader.spec import Check, ExerciseSpec

    ran: list[str] = []
    checks = (Check("values", "values", lambda ctx: ran.append("values")),
              Check("memory", "memory", lambda ctx: ran.append("memory"), probed=False))
    spec = ExerciseSpec("stand-in", "stand-in", ("f",), (), checks)
    assert probe(spec, None, 0, "meta") is None and ran == ["values"]


@pytest.mark.parametrize("met_on_cpu", [frozenset(), frozenset({"timeout"})], ids=["cpu-finished", "cpu-hung-too"])
def test_a_probe_that_does_not_finish_fails_unless_the_cpu_checks_did_not_finish_either(met_on_cpu):
    """Third red team: code that answered on the CPU but hung with inputs on meta passed the device
    check, so code that never returns on a GPU passed it too."""
    from quizprep.grader.device import DID_NOT_FINISH
    from quizprep.grader.device_check import probe
    from quizprep.grader.failures import LearnerFailure
    from quizprep.grader.spec import Check, ExerciseSpec, FailureKind

    def hangs(ctx):
        raise LearnerFailure(FailureKind.TIMEOUT, "did not finish within 20 s")

    spec = ExerciseSpec("stand-in", "stand-in", ("f",), (), (Check("values", "values", hangs),))
    found = probe(spec, None, 0, "meta", frozenset(FailureKind(kind) for kind in met_on_cpu))
    if met_on_cpu:
        assert found is None
    else:
        assert found is not None and found.bug == DID_NOT_FINISH


def _call_paths(session, run) -> set[tuple]:
    """What `run(session)` asked of the learner's code, sizes aside: the op, its target, its keyword
    values other than sizes and its arguments' dtypes."""
    paths: set[tuple] = set()
    sent = session.request

    def recording(payload, timeout=None):
        kwargs = tuple(sorted((key, value) for key, value in payload.get("kwargs", {}).items()
                              if not isinstance(value, int) or isinstance(value, bool)))
        dtypes = tuple(str(arg.dtype) if isinstance(arg, torch.Tensor) else type(arg).__name__
                       for arg in payload.get("args", []))
        paths.add((payload["op"], payload.get("target"), kwargs, dtypes))
        return sent(payload, timeout)

    session.request = recording
    try:
        run(session)
    finally:
        session.request = sent
    return paths


@pytest.mark.parametrize("name", [name for name in available()
                                  if not all(check.probed for check in load_spec(name).checks)])
def test_a_check_left_out_of_the_placement_probe_takes_no_path_the_probe_does_not(name):
    """The device check leaves out a check marked so (flash's memory check: its audit-sized case built
    and run again on meta for nothing) only while every call it makes, sizes aside, is one that the
    probed checks make on the other device too."""
    from quizprep.grader.context import CheckContext
    from quizprep.grader.device_check import probe
    from quizprep.grader.worker_session import WorkerSession

    spec = load_spec(name)
    with WorkerSession(SOLUTIONS / f"{name}.py", forbidden=spec.forbidden) as session:
        session.start()
        probed = _call_paths(session, lambda s: probe(spec, s, 0, "meta"))
        for check in (check for check in spec.checks if not check.probed):
            left_out = _call_paths(session, lambda s, check=check: check.run(CheckContext(s, seed=0, device="cpu")))
            assert left_out and left_out <= probed, (check.id, left_out - probed)


@pytest.mark.parametrize("kind", ["timeout", "crash"])
def test_a_probe_that_runs_out_of_time_names_no_bug_but_a_crash_does(kind):
    """Slow code on a busy machine runs out of time as a hang does: the check fails as not run to
    the end, without telling the learner their placement is wrong."""
    from types import SimpleNamespace

    from quizprep.grader.device import DID_NOT_FINISH
    from quizprep.grader.device_check import device_check
    from quizprep.grader.failures import LearnerFailure
    from quizprep.grader.spec import Check, ExerciseSpec, FailureKind, Status

    def ends(ctx):
        raise LearnerFailure(FailureKind(kind), "did not finish within 20 s" if kind == "timeout" else "Segfault")

    spec = ExerciseSpec("stand-in", "stand-in", ("f",), (), (Check("values", "values", ends),))
    ctx = SimpleNamespace(session=SimpleNamespace(host_copies=[]), seed=0, device="cpu")
    result = device_check(spec, ctx, ("meta",), lambda: None, [])
    assert result.status == Status.FAIL
    if kind == "timeout":
        assert result.message.startswith("not run to the end: with inputs on meta")
        assert result.diagnosis_id in (None, "") and "less busy machine" in result.hint
    else:
        assert result.diagnosis_id == DID_NOT_FINISH.id
