"""Never unisolated in silence: a command that runs agent code says how it is isolated, once, and
records it in its run directory; the records show /testbed whatever the isolation."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.env import sandbox
from swetrain.env.demo import build_demo_task, write_tasks_file
from swetrain.rollout.store import TrajectoryStore


@pytest.fixture
def bwrap_off(monkeypatch):
    monkeypatch.setenv("SWETRAIN_NO_BWRAP", "1")
    sandbox.bwrap_available.cache_clear()
    yield
    monkeypatch.delenv("SWETRAIN_NO_BWRAP")
    sandbox.bwrap_available.cache_clear()


def _rollout(tmp_path):
    task = build_demo_task(tmp_path / "demo")
    tasks = write_tasks_file(task, tmp_path / "demo" / "tasks.jsonl")
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["rollout", "--tasks", str(tasks), "--policy", "scripted:explore", "--group", "1",
                                   "--attempts", "1", "--out", str(out), "--max-turns", "6"])
    assert res.exit_code == 0, res.output
    said = [line for line in res.stderr.splitlines() if line.startswith("swetrain:") and "isolated" in line]
    rows = TrajectoryStore(out).read_all()
    observations = json.dumps([m for t in rows for m in t.messages])
    return said, json.loads((out / "isolation.json").read_text()), observations


def _check(tmp_path, isolated: bool):
    said, record, observations = _rollout(tmp_path)
    assert len(said) == 1 and said[0].startswith("swetrain: " + ("isolated" if isolated else "NOT isolated"))
    assert record["isolated"] is isolated and record["agent_root"] == "/testbed"
    assert str(tmp_path) not in observations  # no host path of the workspace reaches the records
    assert "/testbed/calc/__init__.py" in observations  # the agent's view of the repository
    assert "swetrain: task base state" in observations  # git log: the task's one commit


@pytest.mark.slow
def test_rollout_isolated_says_and_records_it(tmp_path):
    if not sandbox.bwrap_available():
        pytest.skip("bubblewrap is not available")
    _check(tmp_path, True)


@pytest.mark.slow
def test_rollout_unisolated_says_and_records_it(tmp_path, bwrap_off):
    _check(tmp_path, False)


@pytest.mark.parametrize("layout", ["file", "trajectories-file"])
def test_an_unusable_run_directory_is_one_clear_error(tmp_path, layout, capsys, monkeypatch):
    from swetrain.cli import main

    task = build_demo_task(tmp_path / "demo")
    tasks = write_tasks_file(task, tmp_path / "demo" / "tasks.jsonl")
    out = tmp_path / "run"
    if layout == "file":
        out.write_text("not a folder")
    else:
        out.mkdir()
        (out / "trajectories").write_text("not a folder")
    monkeypatch.setattr("sys.argv", ["swetrain", "rollout", "--tasks", str(tasks), "--policy", "scripted:finish",
                                     "--group", "1", "--attempts", "1", "--out", str(out)])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"error: run directory {out}" in err and "is not a directory" in err and "Traceback" not in err
