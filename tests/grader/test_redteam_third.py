"""The third red team (2026-11-29, afternoon; docs/security.md): each attack in redteam_third/, run
through the `quizprep grade` command line as an instructor would, asserting that it is contained.
"""
from __future__ import annotations

import json
import time
import unicodedata
from pathlib import Path

import pytest
from test_redteam_second import HONEST_SOFTMAX, REPORT_BYTES, check, quizprep

pytestmark = pytest.mark.slow

ATTACKS = Path(__file__).parent / "redteam_third"
# Calls the probe makes that would reach the host or another process if they succeeded.
REACHING = ("io_uring_setup", "userfaultfd", "perf_event_open", "bpf", "keyctl", "add_key", "ptrace",
            "process_vm_readv", "pidfd_open", "unshare", "mount", "memfd_create", "open_by_handle_at",
            "setns", "msgget", "shmget", "mq_open", "setpriority", "prlimit64_pid1", "kill_pid1",
            "clone3", "vfork", "syslog", "init_module", "sock1", "sock2", "sock16", "sock17",
            "/proc/1/status", "/proc/1/environ", "/sys/kernel", "/etc/shadow", "/root", "/work", "/tmp")


def attack(name: str, folder: Path, as_name: str, attacks: Path = ATTACKS) -> Path:
    """The attack file `name` (from `attacks`, a red team's folder) copied into `folder` under the
    name it is graded as."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / as_name
    target.write_bytes((attacks / f"{name}.py.txt").read_bytes())
    return target


def grade_json(path: Path, exercise: str) -> dict:
    run = quizprep("grade", path, "--exercise", exercise, "--json", "--no-record")
    assert len(run.stdout) <= REPORT_BYTES, f"report of {len(run.stdout)} bytes"
    return json.loads(run.stdout)


def class_rows(folder: Path, exercise: str, *extra: str | Path) -> list[dict]:
    run = quizprep("grade", folder, "--exercise", exercise, "--jobs", "2", "--json", "--no-record", *extra)
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-500:]
    return json.loads(run.stdout)["submissions"]


def hidden_characters(text: str) -> set[str]:
    """What a terminal acts on or a reader cannot see: controls but newline and tab, format
    characters (bidi overrides, zero-width), line and paragraph separators."""
    return {f"U+{ord(char):04X}" for char in text
            if char not in "\n\t" and unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")}


# ---- the host --------------------------------------------------------------------------------

def test_host_syscalls_sockets_and_paths_reach_nothing(tmp_path):
    report = grade_json(attack("host_probes_softmax", tmp_path, "softmax.py"), "softmax")
    message = check(report, "values")["message"]
    assert message.startswith("raised RuntimeError"), message
    reached = {item.split("=")[0] for item in message.split() if "=OK" in item or "=DIR" in item}
    assert not reached & set(REACHING), message


# ---- forged passes ---------------------------------------------------------------------------

def test_pytorchs_other_multihead_attention_is_refused(tmp_path):
    report = grade_json(attack("ao_quantizable_mha", tmp_path, "mha.py"), "mha")
    assert not report["passed"]
    assert "quantizable" in check(report, "self-attention")["message"]


def test_a_pristine_copy_of_torch_functional_is_flagged_in_class_mode(tmp_path):
    attack("fresh_functional_mha", tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", "mha")
    assert row["read_this"], row


def test_a_utf7_source_hides_nothing_from_the_class_scan(tmp_path):
    attack("utf7_source_softmax", tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", "softmax")
    assert "native code (ctypes)" in row["read_this"] and "the object graph (gc)" in row["read_this"], row


def test_modules_reached_by_computed_names_are_flagged_in_class_mode(tmp_path):
    attack("computed_names_softmax", tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", "softmax")
    assert row["read_this"], row


def test_scores_written_into_a_buffer_from_import_fail_the_memory_audit(tmp_path):
    """Every call is audited (eighth red team): the buffer's n×m view fails each check that calls it,
    the memory check among them, all by the one name."""
    report = grade_json(attack("preallocated_scores_flash", tmp_path, "flash.py"), "flash")
    failed = [item for item in report["checks"] if item["status"] != "pass"]
    assert "memory" in [item["id"] for item in failed], failed
    assert {item["diagnosis_id"] for item in failed} == {"flash-materialised-scores"}, failed


@pytest.mark.xfail(strict=True, reason="the audit is a dispatch mode in the learner's process: popped, it sees nothing")
def test_scores_written_with_the_audit_popped_fail_the_memory_check(tmp_path):
    report = grade_json(attack("preallocated_scores_no_audit_flash", tmp_path, "flash.py"), "flash")
    assert check(report, "memory")["status"] == "fail"


def test_popping_the_memory_audit_is_flagged_in_class_mode(tmp_path):
    attack("preallocated_scores_no_audit_flash", tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", "flash")
    assert "dispatch modes (torch.utils._python_dispatch)" in row["read_this"], row


def test_a_kernel_that_only_copies_a_torch_result_is_refused(tmp_path):
    pytest.importorskip("triton")
    report = grade_json(attack("copy_kernel_flash_triton", tmp_path, "flash_triton.py"), "flash_triton")
    assert not report["passed"]


def test_a_copy_kernel_that_loads_its_inputs_for_show_is_flagged_in_class_mode(tmp_path):
    pytest.importorskip("triton")
    attack("dummy_loads_flash_triton", tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", "flash_triton")
    assert row["read_this"] == ["attention arithmetic in the host code (the kernels should compute it)"], row


def test_flex_attention_is_refused(tmp_path):
    report = grade_json(attack("flex_attention_attention", tmp_path, "attention.py"), "attention")
    assert "flex_attention" in check(report, "values")["message"]


# ---- time limits -----------------------------------------------------------------------------

def test_a_call_that_never_returns_on_another_device_fails_the_device_check(tmp_path):
    report = grade_json(attack("device_stall_softmax", tmp_path, "softmax.py"), "softmax")
    assert check(report, "values")["status"] == "pass"
    assert check(report, "device")["status"] == "fail"


def test_sleeping_in_import_with_every_signal_ignored_ends_at_the_load_limit(tmp_path):
    start = time.monotonic()
    report = grade_json(attack("sleep_in_import_softmax", tmp_path, "softmax.py"), "softmax")
    seconds = time.monotonic() - start
    assert "did not finish" in check(report, "load")["message"]
    assert seconds < 2 * 45 + 30, f"the grade took {seconds:.0f} s against a 45 s overall deadline"


def test_a_worker_that_stops_itself_ends_by_the_deadline(tmp_path):
    start = time.monotonic()
    report = grade_json(attack("signal_stop_softmax", tmp_path, "softmax.py"), "softmax")
    seconds = time.monotonic() - start
    assert check(report, "values")["status"] == "fail"
    assert seconds < 2 * 45 + 30, f"the grade took {seconds:.0f} s against a 45 s overall deadline"


# ---- the reply protocol ----------------------------------------------------------------------

def test_frames_written_on_every_descriptor_never_pass_or_break_the_grader(tmp_path):
    run = quizprep("grade", attack("fd_games_softmax", tmp_path, "softmax.py"), "--json", "--no-record")
    assert run.returncode in (0, 1), run.stderr.decode(errors="replace")[-500:]
    report = json.loads(run.stdout)
    assert not any("internal" in item["message"] for item in report["checks"]), report["checks"]


def test_objects_that_run_code_when_unpickled_stay_in_the_worker(tmp_path):
    canary = Path("/tmp/quizprep_redteam_pwned")
    canary.unlink(missing_ok=True)
    report = grade_json(attack("reply_objects_softmax", tmp_path, "softmax.py"), "softmax")
    assert not report["passed"] and not canary.exists()


# ---- classmates ------------------------------------------------------------------------------

def test_a_classmate_burning_every_thread_it_may_start_does_not_fail_an_honest_file(tmp_path):
    folder = tmp_path / "class"
    attack("cpu_hog_softmax", folder, "mallory.py")
    (folder / "alice.py").write_text(HONEST_SOFTMAX)
    rows = {row["file"]: row for row in class_rows(folder, "softmax")}
    assert rows["alice.py"]["passed"], rows["alice.py"]


# ---- reports and terminals -------------------------------------------------------------------

def test_hidden_characters_reach_no_report_raw(tmp_path):
    path = attack("invisible_text_softmax", tmp_path, "softmax.py")
    text = quizprep("grade", path, "--no-record").stdout.decode()
    as_json = quizprep("grade", path, "--json", "--no-record").stdout.decode()
    quizprep("grade", path, "--no-record", "--format", "exercism", "--output-dir", tmp_path / "out")
    exercism = (tmp_path / "out" / "results.json").read_text()
    assert "all checks pass" in as_json  # the attack's text is in the reports, escaped
    assert (hidden_characters(text), hidden_characters(as_json), hidden_characters(exercism)) == (set(), set(), set())


def test_file_names_that_look_alike_or_hold_controls_are_escaped_in_every_class_output(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("alice.py", "alice\u200b.py", "bob\x1b[2J\x9b31m.py", "carol\u2028.py"):
        (folder / name).write_text(HONEST_SOFTMAX)
    table = quizprep("grade", folder, "--exercise", "softmax", "--jobs", "2", "--no-record",
                     "--csv", tmp_path / "class.csv")
    as_json = quizprep("grade", folder, "--exercise", "softmax", "--jobs", "2", "--no-record", "--json")
    outputs = (table.stdout.decode(), (tmp_path / "class.csv").read_text(), as_json.stdout.decode())
    assert [hidden_characters(text) for text in outputs] == [set(), set(), set()]
    assert "alice\\u200b.py" in outputs[0] and "alice\\u200b.py" in outputs[1]


def test_result_folders_stay_apart_on_a_case_insensitive_disk(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for stem in ("Alice", "alice", "ALICE"):
        (folder / f"{stem}.py").write_text(f"def stable_softmax(x, dim=-1):\n    raise ValueError('I am {stem}')\n")
    run = quizprep("grade", folder, "--exercise", "softmax", "--jobs", "2", "--no-record",
                   "--format", "exercism", "--output-dir", tmp_path / "out")
    assert run.returncode == 0
    folders = [path.name for path in (tmp_path / "out").iterdir()]
    assert len({name.casefold() for name in folders}) == 3, folders
