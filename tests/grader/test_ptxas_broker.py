"""The ptxas opening (issue 23): with the broker started, a learner's process under the seccomp
filter still cannot run any program, and the broker runs only its fixed ptxas, only with
arguments Triton passes, only on files of the private directory. Runs on CPU with a stand-in
ptxas; the real one is exercised by the cuda-marked tests of test_flash_triton.py."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

GRADER = Path(__file__).resolve().parents[2] / "quizprep" / "grader"
HOSTILE = r'''
import json, os, subprocess, sys
sys.path.insert(0, sys.argv[1])
import ptxas_broker, sandbox
private, fake = sys.argv[2], sys.argv[3]
# the worker's order: the broker first, then the syscall filter, then Landlock
channel = ptxas_broker.start((fake,), private)
results = {"filter": sandbox.install_syscall_filter()}
results["files"] = sandbox.confine(sandbox.learner_access(private, hidden=()))
brokered = ptxas_broker.BrokeredSubprocess(channel)

def attempt(name, action):
    try:
        results[name] = repr(action())
    except Exception as error:
        results[name] = f"refused: {type(error).__name__}: {error}"

attempt("subprocess", lambda: subprocess.run(["/bin/true"]))
attempt("os.system", lambda: os.system("true"))
attempt("execv", lambda: os.execv("/bin/true", ["true"]))
attempt("broker: another program", lambda: brokered.run(["/bin/sh", "-c", "id"]))
attempt("broker: ptxas with a shell word", lambda: brokered.run([fake, "--gpu-name=sm_90;id"]))
attempt("broker: output outside", lambda: brokered.run([fake, "-o", "/tmp/escape.ptx.o"]))
attempt("broker: extra option", lambda: brokered.run([fake, "--compile-only", private + "/k.ptx"]))
open(private + "/k.ptx", "w").write("// ptx")
attempt("broker: triton's run", lambda: brokered.run(
    [fake, "-lineinfo", "-v", "--regAllocOptLevel=2", "--gpu-name=sm_90a", private + "/k.ptx", "-o",
     private + "/k.ptx.o"], check=True).returncode)
results["assembled"] = os.path.exists(private + "/k.ptx.o")
print(json.dumps(results))
'''


@pytest.fixture
def outcome(tmp_path):
    private = tmp_path / "private"
    private.mkdir()
    fake = tmp_path / "ptxas"
    fake.write_text('#!/bin/sh\nfor a; do last=$a; done\necho cubin > "$last"\n')
    fake.chmod(0o755)
    done = subprocess.run([sys.executable, "-c", HOSTILE, str(GRADER), str(private), str(fake)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    if results["filter"]:
        pytest.skip(f"no seccomp filter here: {results['filter']}")
    return results


def test_the_learner_still_cannot_run_a_program(outcome):
    assert outcome["subprocess"].startswith("refused: PermissionError")
    assert outcome["execv"].startswith("refused: PermissionError")
    assert outcome["os.system"] != "0"


@pytest.mark.parametrize("request_", ["another program", "ptxas with a shell word", "output outside", "extra option"])
def test_the_broker_refuses_anything_but_a_triton_ptxas_run(outcome, request_):
    assert outcome[f"broker: {request_}"].startswith("refused: PermissionError"), outcome


def test_the_broker_runs_tritons_ptxas_command(outcome):
    assert outcome["broker: triton's run"] == "0" and outcome["assembled"], outcome


def test_no_broker_without_cuda():
    sys.path.insert(0, str(GRADER))
    try:
        import ptxas_broker
    finally:
        sys.path.remove(str(GRADER))
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert ptxas_broker.open_for_triton("/tmp") == ""
