"""The default task environment (env/taskenv.py) and the preflight of every command that runs agent
code: real venvs, real pytest, the real verifier and CLI (no mocks)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swetrain.env import taskenv
from swetrain.env.backend import preflight
from swetrain.env.taskenv import TaskEnvError, check_environment, default_task_env
from swetrain.env.verifier import Verifier
from swetrain.env.interface import PYTEST_PLUGIN_DIR
from swetrain.env.workspace import Workspace, WorkspaceError
from swetrain.tasks.builtin import load_builtin


@pytest.fixture
def fresh_home(tmp_path, monkeypatch):
    """A swetrain home of its own: the task environment is built anew, as on a fresh machine."""
    monkeypatch.setenv("SWETRAIN_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(taskenv.ENV_VAR, raising=False)
    taskenv._CHECKED.clear()
    yield tmp_path / "home"
    taskenv._CHECKED.clear()


def _run(python: Path, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60,
                          env={"PATH": os.environ["PATH"]})


def test_default_env_has_pytest_and_not_swetrains_packages(fresh_home):
    started = time.monotonic()
    env = default_task_env()
    built_s = time.monotonic() - started
    assert env.parent.name == "home-taskenvs" and (env / ".swetrain-ready").exists()
    assert built_s < 60
    python = env / "bin" / "python"
    import pytest as host_pytest

    out = _run(python, "import pytest, sys; print(pytest.__version__); print(sys.prefix)")
    assert out.returncode == 0, out.stderr
    version, prefix = out.stdout.split()
    assert version == host_pytest.__version__  # the pinned pytest swetrain itself depends on
    assert Path(prefix) == env
    for module in ("torch", "transformers", "swetrain", "hypothesis"):  # agent code never runs beside these
        assert _run(python, f"import {module}").returncode != 0, module
    assert (env / "bin" / "pytest").exists()
    assert default_task_env() == env  # cached: the same folder again, not rebuilt
    check_environment(env, PYTEST_PLUGIN_DIR)  # the verifier's plugin loads


def test_gold_patches_verify_in_the_default_env_and_agent_commands_see_it(fresh_home):
    tasks = load_builtin(split="heldout")[:3]
    verifier = Verifier(timeout_s=120, test_timeout_s=20)
    for task in tasks:
        v = verifier.verify(task, task.patch)
        assert v.status == "FULL" and not v.infra_failure, (task.instance_id, v.infra_reason, v.diagnostics[:300])
    with Workspace.create(tasks[0]) as ws:
        res = ws.run("python -c 'import sys, pytest; print(sys.prefix)'; python -m pytest -q -x tests | tail -1")
        assert "home-taskenvs" in res.output and "No module named" not in res.output, res.output
        assert "passed" in res.output or "failed" in res.output


def test_a_broken_env_is_named_with_its_fix(fresh_home, tmp_path):
    env = default_task_env()
    site = next(env.glob("lib/python*/site-packages"))
    shutil.rmtree(site / "pytest")
    shutil.rmtree(site / "_pytest")
    with pytest.raises(WorkspaceError) as err:
        preflight("local", [])
    msg = str(err.value)
    assert "\n" not in msg and str(env) in msg and "No module named 'pytest'" in msg and f"remove {env}" in msg


def test_a_task_env_without_python_is_refused(fresh_home, tmp_path):
    task = load_builtin(split="heldout")[0].model_copy(update={"environment": str(tmp_path / "not-a-venv")})
    with pytest.raises(WorkspaceError, match="not-a-venv.*does not exist"):
        preflight("local", [task])
    with pytest.raises(TaskEnvError):
        check_environment(tmp_path / "not-a-venv", PYTEST_PLUGIN_DIR)


def test_override_names_the_variable(fresh_home, monkeypatch, tmp_path):
    monkeypatch.setenv(taskenv.ENV_VAR, str(tmp_path / "nowhere"))
    with pytest.raises(WorkspaceError, match=r"nowhere.*\$SWETRAIN_TASK_ENV"):
        preflight("local", [])


def test_quickstart_stops_in_seconds_with_one_line_and_writes_nothing(fresh_home, monkeypatch, tmp_path):
    from swetrain.cli import app

    monkeypatch.setenv(taskenv.ENV_VAR, str(tmp_path / "broken-env"))
    out = tmp_path / "qs"
    started = time.monotonic()
    res = CliRunner().invoke(app, ["quickstart", "--out", str(out)])
    assert time.monotonic() - started < 10
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "broken-env" in lines[0], res.output
    assert not out.exists()


@pytest.mark.parametrize("argv", [
    ["verify", "--tasks", "builtin", "--instance", "X", "--patch", "/dev/null"],
    ["rollout", "--tasks", "builtin", "--split", "heldout", "--limit", "1", "--policy", "scripted-repair", "--out", "OUT"],
    ["eval", "--policy", "scripted-repair", "--split", "heldout", "--limit", "1", "--out", "OUT"],
    ["curriculum", "mastery", "--policy", "scripted-repair", "--limit", "1", "--out", "OUT/m.json"],
    ["train", "--recipe", "fcswe", "--out", "OUT"],
    ["experts", "--preset", "smoke", "--out", "OUT"],
    ["env", "selfcheck"],
])
def test_every_command_that_runs_agent_code_checks_first(fresh_home, monkeypatch, tmp_path, argv):
    from swetrain.cli import app

    monkeypatch.setenv(taskenv.ENV_VAR, str(tmp_path / "broken-env"))
    out = tmp_path / "out"
    argv = [a.replace("OUT", str(out)) for a in argv]
    if argv[0] == "verify":  # a real instance id of the suite
        argv[4] = load_builtin(split="heldout")[0].instance_id
    res = CliRunner().invoke(app, argv)
    assert res.exit_code in (1, 2) and "broken-env" in res.output, (argv, res.exit_code, res.output[-500:])
    if argv[0] != "env":
        assert not out.exists() or not any(out.rglob("*.parquet")), argv
