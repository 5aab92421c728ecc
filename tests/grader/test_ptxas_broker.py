"""The ptxas opening (issue 23): with the broker started, a learner's process under the seccomp
filter still cannot run any program, and the broker runs only its fixed ptxas, only with
arguments Triton passes, only on files of the private directory, and builds only launcher
sources that include nothing a launcher does not. Runs on CPU with a stand-in ptxas and a small
Python extension for the launcher; the real ones are exercised by the cuda-marked tests of
test_flash_triton.py."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LEARNER_SIDE = Path(__file__).resolve().parents[2] / "quizprep" / "grader" / "learner_side"
HOSTILE = r'''
import json, os, subprocess, sys
sys.path.insert(0, sys.argv[1])
import ptxas_broker, sandbox
private, fake = sys.argv[2], sys.argv[3]
# the worker's order: the broker first, then the syscall filter, then Landlock
channel = ptxas_broker.start((fake,), private, {"library_dirs": [], "include_dirs": [], "libraries": []})
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

build = ptxas_broker.route_builds(channel)
LAUNCHER = '#include <Python.h>\nstatic struct PyModuleDef m = {PyModuleDef_HEAD_INIT, "%s", NULL, -1, NULL};\n' \
           'PyMODINIT_FUNC PyInit_%s(void) { return PyModule_Create(&m); }\n'

def launcher(name, text=None, folder=None, **dirs):
    folder = folder or os.path.join(private, name)
    os.makedirs(folder, exist_ok=True)
    src = os.path.join(folder, name + ".c")
    open(src, "w").write(text or LAUNCHER % (name, name))
    so = build(name, src, folder, dirs.get("library_dirs", []), [], dirs.get("libraries", []))
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.__name__

attempt("build: triton's launcher", lambda: launcher("__triton_launcher"))
attempt("build: a file of the machine", lambda: launcher("a", '#include "/etc/passwd"\n'))
attempt("build: the assembler", lambda: launcher("b", 'asm(".incbin \\"/etc/passwd\\"");\n'))
attempt("build: a spliced directive", lambda: launcher("c", '#inc\\\nlude "/etc/passwd"\n'))
attempt("build: outside the private directory", lambda: launcher("d", folder="/tmp"))
attempt("build: another library", lambda: launcher("e", libraries=["crypt"]))
print(json.dumps(results))
'''


@pytest.fixture
def outcome(tmp_path):
    private = tmp_path / "private"
    private.mkdir()
    fake = tmp_path / "ptxas"
    fake.write_text('#!/bin/sh\nfor a; do last=$a; done\necho cubin > "$last"\n')
    fake.chmod(0o755)
    done = subprocess.run([sys.executable, "-c", HOSTILE, str(LEARNER_SIDE), str(private), str(fake)],
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


def test_the_broker_builds_a_launcher_the_confined_process_loads(outcome):
    pytest.importorskip("triton")
    if not shutil.which("gcc") and not shutil.which("clang"):
        pytest.skip("no C compiler here")
    assert outcome["build: triton's launcher"] == "'__triton_launcher'", outcome


@pytest.mark.parametrize("request_", ["a file of the machine", "the assembler", "a spliced directive",
                                      "outside the private directory", "another library"])
def test_the_broker_refuses_any_other_build(outcome, request_):
    assert outcome[f"build: {request_}"].startswith("refused: PermissionError"), outcome


def test_no_broker_without_cuda():
    sys.path.insert(0, str(LEARNER_SIDE))
    try:
        import ptxas_broker
    finally:
        sys.path.remove(str(LEARNER_SIDE))
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert ptxas_broker.open_for_triton("/tmp") == ""
