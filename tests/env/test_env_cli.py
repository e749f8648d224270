"""CLI contract: swetrain verify --json, swetrain env tools (JSON lines), swetrain env selfcheck."""

from __future__ import annotations

import json
import os

import pytest
import typer
from typer.testing import CliRunner

from swetrain.env.cli import register
from swetrain.env.demo import write_tasks_file


@pytest.fixture
def app():
    a = typer.Typer()

    @a.callback()
    def _root() -> None:
        """test root"""

    register(a)
    return a


@pytest.fixture
def tasks_file(task, tmp_path):
    return write_tasks_file(task, tmp_path / "task" / "tasks.jsonl")


def test_verify_json_gold_and_garbage(app, task, tasks_file, tmp_path):
    runner = CliRunner()
    gold = tmp_path / "gold.patch"
    gold.write_text(task.patch)
    res = runner.invoke(app, ["verify", "--tasks", str(tasks_file), "--instance", task.instance_id,
                              "--patch", str(gold), "--json"])
    assert res.exit_code == 0, res.output
    v = json.loads(res.output.strip().splitlines()[-1])
    assert v["resolved"] is True and v["status"] == "FULL" and v["patch_applied"] is True
    assert {"resolved", "status", "patch_applied", "infra_failure", "tests", "diagnostics"} <= set(v)
    junk = tmp_path / "junk.patch"
    junk.write_bytes(b"\xff\xfe not a patch")
    res = runner.invoke(app, ["verify", "--tasks", str(tasks_file), "--instance", task.instance_id,
                              "--patch", str(junk), "--json"])
    assert res.exit_code == 0
    v = json.loads(res.output.strip().splitlines()[-1])
    assert v["status"] == "NO" and v["resolved"] is False and "malformed" in v["error"]


def test_verify_bad_inputs_exit_2(app, task, tasks_file, tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["verify", "--tasks", str(tasks_file), "--instance", "nope", "--patch", "x", "--json"])
    assert res.exit_code == 2 and "nope" in res.output
    res = runner.invoke(app, ["verify", "--tasks", str(tasks_file), "--instance", task.instance_id,
                              "--patch", str(tmp_path / "missing.patch")])
    assert res.exit_code == 2 and "missing.patch" in res.output


def test_env_tools_json_lines(app, task, tasks_file):
    calls = [
        {"name": "file_editor", "arguments": {"command": "view", "path": "calc/__init__.py"}},
        {"name": "file_editor", "arguments": {"command": "view", "path": "/etc/passwd"}},
        "not json",
        {"name": "file_editor", "arguments": {"command": "str_replace", "path": "calc/__init__.py",
                                              "old_str": "return a + b  # bug: should multiply", "new_str": "return a * b"}},
        {"name": "execute_bash", "arguments": {"cmd": "sleep 500 & echo bg"}},
        {"name": "finish", "arguments": {"command": "submit"}},
        {"name": "execute_bash", "arguments": {"cmd": "echo never-run"}},
    ]
    stdin = "\n".join(c if isinstance(c, str) else json.dumps(c) for c in calls) + "\n"
    res = CliRunner().invoke(app, ["env", "tools", "--tasks", str(tasks_file), "--instance", task.instance_id], input=stdin)
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.stdout.strip().splitlines()]
    assert [x.get("ok") for x in lines[:6]] == [True, False, False, True, True, True]
    assert "never-run" not in res.output
    final = lines[-1]
    assert "return a * b" in final["patch"] and final["verdict"]["resolved"] is True
    leftovers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if cmdline.startswith(b"sleep\x00500"):
            leftovers.append(pid)
    assert leftovers == []


def test_env_tools_deeply_nested_line_is_an_invalid_call(app, task, tasks_file):
    stdin = "[" * 100_000 + "\n" + json.dumps({"name": "finish", "arguments": {"command": "submit"}}) + "\n"
    res = CliRunner().invoke(app, ["env", "tools", "--tasks", str(tasks_file), "--instance", task.instance_id], input=stdin)
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.stdout.strip().splitlines()]
    assert lines[0]["ok"] is False and "invalid tool call line" in lines[0]["observation"]
    assert lines[1]["ok"] is True and lines[-1]["verdict"]["resolved"] is False


def test_selfcheck(app):
    res = CliRunner().invoke(app, ["env", "selfcheck"])
    assert res.exit_code == 0, res.output
    assert "attempt 1 verdict: NO" in res.output and "attempt 2 verdict: FULL" in res.output
    assert res.output.strip().endswith("PASS")
