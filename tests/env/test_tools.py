"""Agent tools: exact R2E-Gym names/arguments, confinement, errors as observations, undo reset."""

from __future__ import annotations

import json
import os

import pytest

from swetrain.env.tools import TOOL_SPECS, ToolRunner


@pytest.fixture
def tools(ws):
    return ToolRunner(ws)


def test_specs_are_r2e_gym_shaped():
    names = [s["function"]["name"] for s in TOOL_SPECS]
    assert names == ["file_editor", "execute_bash", "search", "finish"]
    fe = TOOL_SPECS[0]["function"]["parameters"]
    assert set(fe["properties"]) == {"command", "path", "file_text", "old_str", "new_str", "insert_line", "view_range"}
    assert fe["properties"]["command"]["enum"] == ["view", "create", "str_replace", "insert", "undo_edit"]
    assert TOOL_SPECS[1]["function"]["parameters"]["required"] == ["cmd"]
    assert TOOL_SPECS[2]["function"]["parameters"]["properties"]["path"]["default"] == "."
    json.dumps(TOOL_SPECS)


def test_view_edit_insert_undo(tools, ws):
    r = tools.call("file_editor", {"command": "view", "path": "calc/__init__.py"})
    assert r.ok and "def mul" in r.observation and "     1\t" in r.observation
    r = tools.call("file_editor", {"command": "view", "path": f"{ws.agent_root}/calc/__init__.py", "view_range": [4, 5]})
    assert r.ok and "def add" in r.observation and "def mul" not in r.observation
    r = tools.call("file_editor", {"command": "str_replace", "path": "/testbed/calc/__init__.py",
                                   "old_str": "return a + b  # bug: should multiply", "new_str": "return a * b"})
    assert r.ok, r.observation
    assert "return a * b" in (ws.path / "calc/__init__.py").read_text()
    r = tools.call("file_editor", {"command": "insert", "path": "calc/__init__.py", "insert_line": 0, "new_str": "# top\n"})
    assert r.ok and (ws.path / "calc/__init__.py").read_text().startswith("# top\n")
    assert tools.call("file_editor", {"command": "undo_edit", "path": "calc/__init__.py"}).ok
    assert tools.call("file_editor", {"command": "undo_edit", "path": "calc/__init__.py"}).ok
    assert "# bug: should multiply" in (ws.path / "calc/__init__.py").read_text()
    r = tools.call("file_editor", {"command": "undo_edit", "path": "calc/__init__.py"})
    assert not r.ok and "no edit" in r.observation


def test_create_and_directory_view(tools, ws):
    r = tools.call("file_editor", {"command": "create", "path": "pkg/new.py", "file_text": "X = 1\n"})
    assert r.ok and (ws.path / "pkg/new.py").read_text() == "X = 1\n"
    r = tools.call("file_editor", {"command": "create", "path": "pkg/new.py", "file_text": "again"})
    assert not r.ok and "already exists" in r.observation
    r = tools.call("file_editor", {"command": "view", "path": "."})
    assert r.ok and "calc/" in r.observation and ".git" not in r.observation


@pytest.mark.parametrize(
    "args, fragment",
    [
        ({"command": "view", "path": "../../etc/passwd"}, "outside"),
        ({"command": "view", "path": "/etc/passwd"}, "outside"),
        ({"command": "create", "path": "/tmp/evil.txt", "file_text": "x"}, "outside"),
        ({"command": "create", "path": "calc/../../evil.txt", "file_text": "x"}, "outside"),
        ({"command": "view", "path": ".git/config"}, ".git"),
        ({"command": "bogus", "path": "calc"}, "unknown command"),
        ({"command": "str_replace", "path": "calc/__init__.py", "old_str": "nope", "new_str": "x"}, "not found"),
        ({"command": "str_replace", "path": "calc/__init__.py", "old_str": "return", "new_str": "x"}, "occurs"),
        ({"command": "insert", "path": "calc/__init__.py", "insert_line": 999, "new_str": "x"}, "out of range"),
        ({"command": "view", "path": "calc/__init__.py", "view_range": [5]}, "view_range"),
        ({"command": "view", "path": "missing.py"}, "does not exist"),
        ({"command": "view", "path": 3}, "path must be"),
        ({"command": "create", "path": "a.py"}, "file_text"),
        ({"command": "view", "path": "calc", "unknown_arg": 1}, "invalid arguments"),
    ],
)
def test_bad_calls_are_observations(tools, args, fragment):
    r = tools.call("file_editor", args)
    assert not r.ok and fragment in r.observation and r.observation.startswith("Error")


def test_symlink_escape_is_refused(tools, ws, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    os.symlink(secret, ws.path / "link.txt")
    os.symlink(tmp_path, ws.path / "linkdir")
    for path in ("link.txt", "linkdir/secret.txt"):
        r = tools.call("file_editor", {"command": "view", "path": path})
        assert not r.ok and "outside" in r.observation
    r = tools.call("file_editor", {"command": "create", "path": "linkdir/new.txt", "file_text": "x"})
    assert not r.ok and not (tmp_path / "new.txt").exists()
    assert not tools.call("search", {"search_term": "secret", "path": "linkdir"}).ok


def test_unknown_tool_and_bad_arguments(tools):
    assert not tools.call("rm_rf", {}).ok
    assert not tools.call("execute_bash", {}).ok
    assert not tools.call("execute_bash", {"cmd": ["ls"]}).ok
    assert not tools.call("execute_bash", "ls").ok
    assert not tools.call(None, {}).ok


def test_execute_bash_and_search(tools):
    r = tools.call("execute_bash", {"cmd": "python -m pytest -q tests 2>&1 | tail -1; exit 2"})
    assert r.ok and "passed" in r.observation and "[exit code: 2]" in r.observation
    r = tools.call("search", {"search_term": "def mul"})
    assert r.ok and "calc/__init__.py (1 matches)" in r.observation
    r = tools.call("search", {"search_term": "return", "path": "calc/__init__.py"})
    assert r.ok and "5:" in r.observation
    assert "No matches" in tools.call("search", {"search_term": "zzz_nothing"}).observation


def test_execute_bash_timeout_is_observation(ws):
    tools = ToolRunner(ws, command_timeout=0.5)
    r = tools.call("execute_bash", {"cmd": "sleep 30"})
    assert not r.ok and "timed out" in r.observation


def test_finish_and_reset_clears_undo_history(tools, ws):
    tools.call("file_editor", {"command": "create", "path": "n.py", "file_text": "1"})
    r = tools.call("finish", {"command": "submit", "result": "done"})
    assert r.done and r.ok and tools.finished
    assert not tools.call("finish", {"command": "quit"}).ok
    ws.reset()
    assert not tools.finished and not (ws.path / "n.py").exists()
    r = tools.call("file_editor", {"command": "undo_edit", "path": "n.py"})
    assert not r.ok and "no edit" in r.observation


def test_execute_bash_observations_repeat_exactly(tools):
    """Two runs of one command print other addresses and run times; the agent reads the same text
    both times (env/stable.py), so a fixed seed reproduces the episode."""
    cmd = ("python -c \"import calc; print(object(), calc.mul)\"; "
           "python -m pytest -q tests 2>&1 | tail -1")
    first, second = (tools.call("execute_bash", {"cmd": cmd}).observation for _ in range(2))
    assert first == second
    assert "<object object at 0x...>" in first and "<function mul at 0x...>" in first
    assert "passed" in first and " in 0." not in first and not first.rstrip().endswith("s")


def test_str_replace_is_exact_by_default_and_tolerant_on_request(tools, ws):
    """``edit_match`` defaults to exact (R2E-Gym); tolerant re-indents a copy made at the wrong depth."""
    assert tools.edit_match == "exact"
    args = {"command": "str_replace", "path": "calc/__init__.py",
            "old_str": "        return a + b  # bug: should multiply", "new_str": "        return a * b"}
    r = tools.call("file_editor", args)
    assert not r.ok and "not found verbatim" in r.observation
    r = ToolRunner(ws, edit_match="tolerant").call("file_editor", args)
    assert r.ok and "edit tier: indentation" in r.observation
    assert "\n    return a * b\n" in (ws.path / "calc/__init__.py").read_text()
