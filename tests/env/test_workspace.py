"""Workspace: commands under limits, containment, exact reset, binary-safe diff."""

from __future__ import annotations

import os
import stat
import subprocess
import time

import pytest

from swetrain.env.sandbox import bwrap_available
from swetrain.env.workspace import Limits, Workspace, WorkspaceError
from swetrain.env.tree import scan
from swetrain.tasks.record import Task


def _state(ws):
    """Everything reset must restore: paths, types, modes, contents (not inode/ctime)."""
    out = {}
    for rel, (mode, size, mtime, _ino, _ctime) in scan(ws.path).items():
        if rel.startswith(".git/"):
            continue
        full = ws.path / rel
        body = full.read_bytes() if stat.S_ISREG(mode) else (os.readlink(full) if stat.S_ISLNK(mode) else None)
        out[rel] = (mode, size, mtime if not stat.S_ISDIR(mode) else None, body)
    return out


def _git_state(ws):
    return {rel: e[:3] for rel, e in scan(ws.path / ".git").items()}


def test_run_uses_task_interpreter_and_workspace(ws):
    res = ws.run("pwd && python -c 'import calc, sys; print(calc.__file__); print(sys.executable)'")
    assert res.returncode == 0, res.output
    lines = res.output.split()
    assert lines[0] == ws.agent_root
    assert lines[1].startswith(ws.agent_root + "/calc/")


def test_set_reprs_are_the_same_in_every_command(ws):
    """A fixed str hash: one action gives one observation (a failing test's message often shows a set)."""
    cmd = "python -c \"print({'qwerty', 'letmein', 'password', 'admin', 'hunter2', 'dragon', 'monkey', 'shadow'})\""
    outputs = {ws.run(cmd).output for _ in range(3)}
    assert len(outputs) == 1, outputs


def test_failing_command_and_exit_code(ws):
    res = ws.run("echo out; echo err >&2; exit 3")
    assert res.returncode == 3 and "out" in res.output and "err" in res.output and not res.timed_out


def test_sleep_forever_times_out_and_leaves_nothing(ws):
    t0 = time.monotonic()
    res = ws.run("sleep 1000 & sleep 1000", timeout=1.0)
    assert res.timed_out and res.returncode == 124
    assert time.monotonic() - t0 < 10
    out = subprocess.run(["pgrep", "-f", "sleep 1000"], capture_output=True, text=True).stdout.split()
    assert [p for p in out if _env_has(p, ws.marker)] == []


def _env_has(pid: str, marker: str) -> bool:
    try:
        return marker.encode() in open(f"/proc/{pid}/environ", "rb").read()
    except OSError:
        return False


def test_background_process_does_not_survive_command(ws):
    res = ws.run("(setsid sleep 300 &) ; nohup sleep 301 >/dev/null 2>&1 & echo started")
    assert "started" in res.output
    time.sleep(0.2)
    assert [p for p in os.listdir("/proc") if p.isdigit() and _env_has(p, ws.marker)] == []


def test_infinite_output_is_truncated_head_and_tail(task, tmp_path):
    limits = Limits(timeout_s=2, output_head_chars=100, output_tail_chars=50)
    with Workspace.create(task, root=tmp_path / "w2", limits=limits) as ws:
        res = ws.run("echo START; yes | head -c 5000000; echo; echo END")
        assert res.truncated and res.output.startswith("START")
        assert res.output.rstrip().endswith("END") and "bytes of output truncated" in res.output
        assert len(res.output) < 400
        res = ws.run("yes")  # never ends: killed at the timeout, output still bounded
        assert res.timed_out and res.truncated and len(res.output) < 500


def test_file_size_limit(task, tmp_path):
    with Workspace.create(task, root=tmp_path / "w3", limits=Limits(file_size_bytes=1 << 20)) as ws:
        res = ws.run("head -c 5000000 /dev/zero > big.bin; echo rc=$?")
        assert (ws.path / "big.bin").stat().st_size <= 1 << 20
        assert "rc=0" not in res.output


def test_memory_limit(task, tmp_path):
    with Workspace.create(task, root=tmp_path / "w4", limits=Limits(memory_bytes=300 << 20)) as ws:
        res = ws.run("python -c 'x = bytearray(600 * 1024 * 1024); print(\"allocated\")'")
        assert "MemoryError" in res.output and "allocated" not in res.output


@pytest.mark.slow
def test_fork_bomb_is_contained(task, tmp_path):
    with Workspace.create(task, root=tmp_path / "w5", limits=Limits(nproc=64, timeout_s=4)) as ws:
        if ws.cgroup is None and os.geteuid() == 0:
            pytest.skip("root without a writable pids cgroup: RLIMIT_NPROC cannot bound a fork bomb")
        t0 = time.monotonic()
        res = ws.run("bomb() { bomb | bomb & }; bomb; sleep 2; echo survived")
        assert time.monotonic() - t0 < 30
        ws.kill_all()
        time.sleep(0.2)
        assert [p for p in os.listdir("/proc") if p.isdigit() and _env_has(p, ws.marker)] == []
        assert ws.run("echo alive").output.strip() == "alive"  # the workspace still works
        assert res.returncode is not None


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap not available")
def test_isolation_no_network_no_writes_outside(ws, tmp_path):
    assert ws.isolated
    outside = f"/var/tmp/swetrain-probe-{ws.marker}"
    pristine_file = ws.pristine / "calc" / "__init__.py"
    before = pristine_file.read_text()
    res = ws.run(
        f"echo x > {outside}; echo rc1=$?; echo y >> {pristine_file}; echo rc2=$?; "
        "python - <<'EOF'\nimport socket\ntry:\n    socket.create_connection(('1.1.1.1', 80), timeout=2)\n    print('NET-OPEN')\n"
        "except OSError as e:\n    print('NET-BLOCKED', e)\nEOF\n"
        "echo hi > /tmp/private && cat /tmp/private"
    )
    try:
        assert not os.path.exists(outside)
    finally:
        if os.path.exists(outside):
            os.unlink(outside)
    assert "rc1=0" not in res.output and "rc2=0" not in res.output
    assert pristine_file.read_text() == before
    assert "NET-BLOCKED" in res.output and "NET-OPEN" not in res.output
    assert "hi" in res.output
    # /tmp is private to the command
    assert "No such file" in ws.run("cat /tmp/private").output


def test_unisolated_mode_says_so(task, tmp_path):
    with Workspace.create(task, root=tmp_path / "w6", isolated=False) as ws:
        # the agent sees /testbed on every path: commands and output are translated
        assert not ws.isolated and ws.agent_root == "/testbed" and ws.exec_root == str(ws.path)
        assert ws.run("pwd").output.strip() == "/testbed"
        assert ws.run("ls /testbed/calc && cd /testbed/calc && pwd").output.split()[-1] == "/testbed/calc"
        assert ws.run("echo /testbed2 x/testbed").output.strip() == "/testbed2 x/testbed"
        ws.run("setsid sleep 300 >/dev/null 2>&1 < /dev/null &")
        ws.reset()
        time.sleep(0.1)
        assert [p for p in os.listdir("/proc") if p.isdigit() and _env_has(p, ws.marker)] == []


def test_reset_restores_everything(ws):
    before, git_before = _state(ws), _git_state(ws)
    script = """
    set -e
    echo changed >> calc/__init__.py
    rm tests/test_calc.py
    chmod 700 README.md
    chmod +x .gitignore
    echo new > untracked.txt
    mkdir -p build/deep && echo obj > build/deep/o.bin
    mkdir newdir && echo z > newdir/z.py
    ln -s /etc/passwd link_out
    mv calc calc_moved && mkdir calc && echo x > calc/__init__.py
    git add -A && git -c user.name=a -c user.email=b commit -qm leak && git branch leaked
    git stash list
    """
    res = ws.run(script)
    assert res.returncode == 0, res.output
    assert _state(ws) != before
    ws.reset()
    assert _state(ws) == before
    assert _git_state(ws).keys() == git_before.keys()
    assert ws.run("git status --porcelain --ignored").output == ""
    assert ws.run("git log --all --oneline | wc -l").output.strip() == "1"
    assert ws.diff() == ""
    # reset twice (no changes) and after a tool-free host edit
    ws.reset()
    (ws.path / "calc" / "__init__.py").write_text("broken")
    ws.reset()
    assert _state(ws) == before


def test_reset_full_scan_path(task, tmp_path):
    with Workspace.create(task, root=tmp_path / "w7") as ws:
        before = _state(ws)
        ws._watcher = None  # force the no-inotify fallback
        ws.run("rm -rf tests; echo 1 > calc/new.py; chmod 600 calc/__init__.py")
        ws.reset()
        assert _state(ws) == before


def test_reset_restores_locked_folder(ws):
    before = _state(ws)
    ws.run("mkdir locked && echo s > locked/f && chmod 000 locked calc")
    ws.reset()
    assert _state(ws) == before


def test_reset_hooks_run(ws):
    calls = []
    ws.add_reset_hook(lambda: calls.append(1))
    ws.reset()
    assert calls == [1]


def test_diff_includes_untracked_and_binary_and_applies(ws, task, tmp_path):
    ws.run("printf 'x\\0y\\1' > data.bin; echo 'def sub(a, b):' >> calc/__init__.py; "
           "echo '    return a - b' >> calc/__init__.py; mkdir -p build && echo ignored > build/x")
    patch = ws.diff()
    assert "GIT binary patch" in patch and "data.bin" in patch and "def sub" in patch
    assert "build/x" not in patch
    with Workspace.create(task, root=tmp_path / "other") as other:
        res = other.run("git apply --binary -", stdin=patch.encode())
        assert res.returncode == 0, res.output
        assert (other.path / "data.bin").read_bytes() == b"x\0y\1"


def test_diff_ignores_agent_git_config(ws, tmp_path):
    marker = tmp_path / "pwned"
    ws.run(f"git config core.fsmonitor 'touch {marker}'; git config core.hooksPath /nonexistent; echo 1 > a.txt")
    assert "a.txt" in ws.diff()
    assert not marker.exists()


def test_workspaces_share_the_pristine_snapshot(task, tmp_path):
    a = Workspace.create(task, root=tmp_path / "a")
    b = Workspace.create(task, root=tmp_path / "b")
    try:
        assert a.pristine == b.pristine
        # each workspace owns its objects: nothing points into a store shared with other tasks
        assert not (a.path / ".git" / "objects" / "info" / "alternates").exists()
        assert a.run("git log --all --format=%s").output.strip() == "swetrain: task base state"
        a.run("echo A > calc/__init__.py")
        assert "A" not in (b.path / "calc" / "__init__.py").read_text()
        assert "A" not in (a.pristine / "calc" / "__init__.py").read_text()
    finally:
        a.close()
        b.close()
    assert not a.base.exists() and not b.base.exists()


def test_bad_tasks_raise_clear_errors(tmp_path, task):
    with pytest.raises(WorkspaceError, match="source"):
        Workspace.create(Task(instance_id="x", base_commit="abc"))
    bad = task.model_copy(update={"base_commit": "0" * 40})
    bad.with_base_dir(tmp_path / "task")
    with pytest.raises(WorkspaceError, match="not a commit"):
        Workspace.create(bad)
    noenv = task.model_copy(update={"environment": str(tmp_path / "nope")})
    noenv.with_base_dir(tmp_path / "task")
    with pytest.raises(WorkspaceError, match="environment"):
        Workspace.create(noenv)


def test_closed_workspace_refuses(task, tmp_path):
    ws = Workspace.create(task, root=tmp_path / "c")
    ws.close()
    with pytest.raises(WorkspaceError, match="closed"):
        ws.run("true")
