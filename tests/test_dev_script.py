"""`python3 dev.py quiz|test`: pip runs on the first launch and after pyproject.toml changes, never
on a launch with nothing new to install (issue 21: 7-19 s and 50 lines of pip per launch)."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "dev.py"


@pytest.fixture
def dev(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """dev.py with its venv and checkout in tmp_path; records the commands it would run instead
    of running them."""
    spec = importlib.util.spec_from_file_location("dev_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    root, venv_dir = tmp_path / "checkout", tmp_path / ".venv"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "quizprep"\n', encoding="utf-8")
    monkeypatch.setattr(module, "ROOT", root)
    monkeypatch.setattr(module, "VENV", venv_dir)
    monkeypatch.setattr(module, "STAMP", venv_dir / "quizprep-installed", raising=False)

    def create(path: Path, with_pip: bool) -> None:
        module.venv_python().parent.mkdir(parents=True, exist_ok=True)
        module.venv_python().write_text("", encoding="utf-8")

    module.commands, module.log = [], []
    monkeypatch.setattr(module.venv, "create", create)
    # torch counts as installed once a pip command installed it
    monkeypatch.setattr(module, "has_module", lambda python, name: any("install torch" in c for c in module.log))
    monkeypatch.setattr(module, "run", lambda *cmd: record(" ".join(map(str, cmd))))

    def record(command: str) -> None:
        module.commands.append(command)
        module.log.append(command)

    return module


def pip_installs(dev, extras: str) -> list[str]:
    dev.commands.clear()
    dev.ensure_environment(extras)
    return [c for c in dev.commands if " pip install" in c]


def test_the_first_launch_installs_torch_and_quizprep_then_later_launches_install_nothing(dev):
    first = pip_installs(dev, "")
    assert len(first) == 2 and "torch" in first[0] and first[1].endswith(f"-e {dev.ROOT}")
    assert pip_installs(dev, "") == []
    assert pip_installs(dev, "") == []


def test_a_changed_pyproject_installs_again(dev):
    pip_installs(dev, "")
    with (dev.ROOT / "pyproject.toml").open("a", encoding="utf-8") as file:
        file.write('dependencies = ["rich"]\n')
    assert [c for c in pip_installs(dev, "") if "-e" in c] == [f"{dev.venv_python()} -m pip install -e {dev.ROOT}"]
    assert pip_installs(dev, "") == []


@pytest.mark.parametrize("extras", ["[dev]", "[dev,triton]"])
def test_the_test_extras_are_installed_even_after_a_quiz_install_and_cover_the_quiz(dev, extras):
    pip_installs(dev, "")
    assert [c for c in pip_installs(dev, extras) if "-e" in c] == \
        [f"{dev.venv_python()} -m pip install -e {dev.ROOT}{extras}"]
    assert pip_installs(dev, extras) == []
    assert pip_installs(dev, "") == []  # the test extras include everything the quiz needs


def test_a_deleted_venv_is_rebuilt_whatever_the_stamp_says(dev):
    pip_installs(dev, "")
    dev.venv_python().unlink()
    dev.log.clear()  # torch went with the venv
    assert len(pip_installs(dev, "")) == 2


def test_lint_runs_ruff_the_import_contracts_then_mypy_and_fails_when_any_does(dev, monkeypatch):
    ran: list[list[str]] = []

    def fake_run(cmd: list[str], cwd: Path) -> SimpleNamespace:
        ran.append(cmd)
        return SimpleNamespace(returncode=1 if len(ran) == 1 else 0)

    monkeypatch.setattr(dev.subprocess, "run", fake_run)
    assert dev.main(["lint"]) == 1  # ruff found something; the contracts and mypy still ran
    assert ran[0][1:] == ["-m", "ruff", "check", "quizprep", "tests", "dev.py"]
    assert Path(ran[1][0]).name.startswith("lint-imports") and ran[2][1:] == ["-m", "mypy"] and len(ran) == 3
    assert any(c.endswith(f"-e {dev.ROOT}[dev,triton]") for c in dev.commands)  # the test suite's install
