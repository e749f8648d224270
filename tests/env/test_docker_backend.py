"""The docker workspace backend, and the security checks run against both backends.

Docker-marked tests need the Docker SDK, a daemon and the base image (``swetrain env build-image``
builds it; ``.ci/run`` does so once); without them they skip with the reason. The local half of each
parametrized test always runs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from swetrain.env.backend import open_workspace
from swetrain.env.sandbox import Limits, bwrap_available
from swetrain.env.tools import ToolRunner
from swetrain.env.verifier import Verifier

# processes running `sleep N00` (the pattern does not match its own command line)
_COUNT_SLEEP = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c 'sleep {n}[0]0' || true"
BACKENDS = [pytest.param("local", id="local"), pytest.param("docker", id="docker", marks=pytest.mark.docker)]


def _docker_skip_reason() -> str | None:
    try:
        import docker  # noqa: F401
    except ImportError:
        return "docker SDK not installed (pip install 'swetrain[docker]')"
    from swetrain.env.docker_client import DockerUnavailable, docker_client
    from swetrain.env.images import _image_exists, base_image_tag

    try:
        client = docker_client()
    except DockerUnavailable as exc:
        return str(exc)
    if not _image_exists(client, base_image_tag()):
        return f"base image {base_image_tag()} not built (swetrain env build-image as root with debootstrap)"
    return None


@pytest.fixture(scope="session")
def docker_ok() -> None:
    reason = _docker_skip_reason()
    if reason:
        pytest.skip(reason)


def _on(backend: str, task, request):
    """The task as that backend runs it (docker: its local image built first)."""
    if backend == "local":
        return task
    request.getfixturevalue("docker_ok")
    from swetrain.env.images import ensure_task_image

    tag, _ = ensure_task_image(task)
    return task.model_copy(update={"environment": f"docker://{tag}"})


def _our_containers() -> list:
    from swetrain.env.docker_client import LABEL, OWNER_LABEL, docker_client, owner_id

    client = docker_client()
    return [c for c in client.containers.list(all=True, filters={"label": LABEL})
            if c.labels.get(OWNER_LABEL) == owner_id()]


# ------------------------------------------------------------------------------ security, both backends
@pytest.mark.parametrize("backend", BACKENDS)
def test_no_network_and_no_write_outside_survives_reset(backend, task, request):
    if backend == "local" and not bwrap_available():
        pytest.skip("bubblewrap not available")
    t = _on(backend, task, request)
    with open_workspace(t, sandbox=backend, limits=Limits(timeout_s=30)) as ws:
        res = ws.run(
            "python - <<'EOF'\nimport socket\ntry:\n    socket.create_connection(('1.1.1.1', 80), timeout=2)\n"
            "    print('NET-OPEN')\nexcept OSError as e:\n    print('NET-BLOCKED', e)\nEOF\n"
            "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
        )
        assert "NET-BLOCKED" in res.output and "NET-OPEN" not in res.output
        assert [x for x in res.output.split("\n")[1:] if x.strip()] == ["lo"]
        ws.run("echo x > /tmp/probe; echo x > $HOME/probe; echo x > /testbed/probe; "
               "(echo x > /etc/swetrain-probe) 2>/dev/null; chmod 000 /testbed/README.md; sleep 300 &")
        ws.reset()
        res = ws.run("ls /tmp/probe $HOME/probe /testbed/probe /etc/swetrain-probe 2>&1 | grep -c 'No such'; "
                     "stat -c %a /testbed/README.md; " + _COUNT_SLEEP.format(n=3))
        assert res.output.split() == ["4", "644", "0"], res.output
        assert ws.diff() == ""


@pytest.mark.parametrize("backend", BACKENDS)
def test_path_and_symlink_escapes_refused(backend, task, request):
    t = _on(backend, task, request)
    with open_workspace(t, sandbox=backend, limits=Limits(timeout_s=30)) as ws:
        tools = ToolRunner(ws)
        ws.run("ln -s /etc/passwd leak; ln -s /etc linkdir")
        for path in ("../../etc/passwd", "/etc/passwd", "leak", "linkdir/passwd", ".git/config", "/testbed/../etc"):
            r = tools.call("file_editor", {"command": "view", "path": path})
            assert not r.ok and r.observation.startswith("Error:"), (path, r.observation)
        r = tools.call("file_editor", {"command": "create", "path": "linkdir/evil", "file_text": "x"})
        assert not r.ok
        assert tools.call("search", {"search_term": "root:", "path": "/etc"}).ok is False
        r = tools.call("file_editor", {"command": "view", "path": "/testbed/calc/__init__.py"})
        assert r.ok and "def mul" in r.observation


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_fork_bomb_and_memory_hog_contained(backend, task, request):
    t = _on(backend, task, request)
    limits = Limits(nproc=64, timeout_s=6, memory_bytes=300 << 20)
    with open_workspace(t, sandbox=backend, limits=limits) as ws:
        if backend == "local" and ws.cgroup is None and os.geteuid() == 0:
            pytest.skip("root without a writable pids cgroup: RLIMIT_NPROC cannot bound a fork bomb")
        t0 = time.monotonic()
        res = ws.run("bomb() { bomb | bomb & }; bomb; sleep 2; echo survived")
        assert time.monotonic() - t0 < 40 and not ws.crashed(res)
        assert ws.run("echo alive").output.strip() == "alive"
        res = ws.run("python -c 'x = bytearray(600 * 1024 * 1024); print(\"allocated\")'")
        assert "allocated" not in res.output and res.returncode != 0 and not ws.crashed(res)
        assert ws.run("echo alive").output.strip() == "alive"


@pytest.mark.parametrize("backend", BACKENDS)
def test_hanging_test_times_out_as_a_failure(backend, task, request):
    t = _on(backend, task, request)
    with open_workspace(task, sandbox="local") as ws:  # make mul hang
        ws.run("sed -i 's/    return a + b  # bug: should multiply/    while True:\\n        pass/' calc/__init__.py")
        patch = ws.diff()
    assert "while True" in patch
    v = Verifier(timeout_s=120, test_timeout_s=2, sandbox=backend).verify(t, patch)
    assert not v.infra_failure and v.status == "NO", v.model_dump()
    f2p = [x for x in v.tests if x.kind == "FAIL_TO_PASS"]
    assert f2p and all(x.status == "FAILED" for x in f2p)
    assert "per-test limit" in v.diagnostics


# ------------------------------------------------------------------------------ docker only
def _verdict(v) -> dict:
    d = v.model_dump(mode="json")
    d.pop("duration_s", None)
    return d


@pytest.mark.docker
def test_verdict_parity_gold_empty_wrong_malformed(task, request):
    t = _on("docker", task, request)
    with open_workspace(task, sandbox="local") as ws:
        ws.run("sed -i 's/    return a + b  # bug: should multiply/    return a * b + 1/' calc/__init__.py")
        wrong = ws.diff()
    assert "a * b + 1" in wrong
    new_file = "diff --git a/extra.py b/extra.py\nnew file mode 100644\n--- /dev/null\n+++ b/extra.py\n@@ -0,0 +1 @@\n+X = 1\n"
    local, docker = Verifier(timeout_s=120, sandbox="local"), Verifier(timeout_s=120, sandbox="docker")
    for patch, status in ((t.patch, "FULL"), ("", "NO"), (wrong, "NO"), (new_file, "NO"), ("not a diff\n", "NO"),
                          ("--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-a\n+b\n", "NO")):
        a, b = local.verify(task, patch), docker.verify(t, patch)
        assert _verdict(a) == _verdict(b), (patch, _verdict(a), _verdict(b))
        assert b.status == status and not b.infra_failure
    assert _our_containers() == []


@pytest.mark.docker
def test_docker_reset_is_exact_and_tools_work(task, request):
    t = _on("docker", task, request)
    with open_workspace(t, sandbox="docker", limits=Limits(timeout_s=30)) as ws:
        tools = ToolRunner(ws)
        assert tools.call("file_editor", {"command": "str_replace", "path": "calc/__init__.py",
                                          "old_str": "return a + b  # bug: should multiply",
                                          "new_str": "return a * b"}).ok
        assert tools.call("file_editor", {"command": "create", "path": "pkg/new.py", "file_text": "X = 1\n"}).ok
        r = tools.call("search", {"search_term": "def mul"})
        assert r.ok and "/testbed/calc/__init__.py (1 matches)" in r.observation
        assert "return a * b" in ws.read_file("calc/__init__.py").decode()
        patch = ws.diff()
        assert "pkg/new.py" in patch and "+    return a * b" in patch
        ws.run("git add -A && git -c user.name=a -c user.email=b commit -qm x && git branch leaked; "
               "echo y > /root/.bashrc; chmod 700 tests")
        assert tools.call("file_editor", {"command": "undo_edit", "path": "pkg/new.py"}).ok
        ws.reset()
        assert ws.diff() == ""
        res = ws.run("git log --all --oneline | wc -l; git status --porcelain --ignored | wc -l; stat -c %a tests")
        assert res.output.split() == ["1", "0", "755"], res.output
        assert tools.call("file_editor", {"command": "undo_edit", "path": "pkg/new.py"}).ok is False  # hooks ran
        # output truncation and wall timeout, as in the local backend
        res = ws.run("yes | head -c 100000", timeout=10)
        assert res.truncated and "bytes of output truncated" in res.output
        res = ws.run("sleep 100 & sleep 100", timeout=1)
        assert res.timed_out and res.returncode == 124
        assert ws.run(_COUNT_SLEEP.format(n=1)).output.strip() == "0"
        assert ws.run("cat", stdin=b"piped\n").output == "piped\n"


@pytest.mark.docker
def test_bad_input_is_one_clear_error(task, request, tmp_path):
    from swetrain.env.docker_backend import DockerError, DockerWorkspace, docker_preflight

    request.getfixturevalue("docker_ok")
    missing = task.model_copy(update={"environment": "docker://swetrain/no-such-image:1"})
    with pytest.raises(DockerError, match=r"docker pull swetrain/no-such-image:1"):
        DockerWorkspace.create(missing)
    with pytest.raises(DockerError, match="build-image"):
        docker_preflight([task])  # no image at all
    v = Verifier(sandbox="docker").verify(missing, task.patch)
    assert v.infra_failure and "docker pull" in v.infra_reason
    # the CLI: one line, exit 2
    from swetrain.tasks.record import save_tasks

    save_tasks([missing], tmp_path / "t.jsonl")
    (tmp_path / "p.diff").write_text(task.patch)
    proc = subprocess.run([sys.executable, "-m", "swetrain.cli", "verify", "--tasks", str(tmp_path / "t.jsonl"),
                           "--instance", task.instance_id, "--patch", str(tmp_path / "p.diff"), "--sandbox", "docker"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0 and "docker pull" in proc.stderr


def test_daemon_down_is_one_clear_error(task, tmp_path):
    pytest.importorskip("docker")
    from swetrain.tasks.record import save_tasks

    save_tasks([task.model_copy(update={"environment": "docker://swetrain/any:1"})], tmp_path / "t.jsonl")
    (tmp_path / "p.diff").write_text(task.patch)
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock"}
    proc = subprocess.run([sys.executable, "-m", "swetrain.cli", "verify", "--tasks", str(tmp_path / "t.jsonl"),
                           "--instance", task.instance_id, "--patch", str(tmp_path / "p.diff"), "--sandbox", "docker"],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "Docker daemon is not reachable" in proc.stderr


@pytest.mark.docker
def test_killed_run_leaves_containers_that_the_next_start_removes(task, request, tmp_path):
    from swetrain.env.docker_client import LABEL, clean_stale, docker_client

    t = _on("docker", task, request)
    from swetrain.tasks.record import save_tasks

    save_tasks([t], tmp_path / "t.jsonl")
    script = (
        "import os, signal, sys\n"
        "from swetrain.tasks.record import load_tasks\n"
        "from swetrain.env.backend import open_workspace\n"
        f"ws = open_workspace(load_tasks({str(tmp_path / 't.jsonl')!r})[0], sandbox='docker')\n"
        "print(ws.container.id, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    cid = proc.stdout.split()[0]
    client = docker_client()
    # sparse: ids from the list call alone; a full list inspects each container and 404s when another
    # test (a parallel pytest worker) removes its own container in between
    ids = [c.id for c in client.containers.list(all=True, sparse=True, filters={"label": LABEL})]
    assert cid in ids  # left behind by the killed process, labelled
    clean_stale(client)  # what the next process does on its first client
    assert cid not in [c.id for c in client.containers.list(all=True, sparse=True, filters={"label": LABEL})]


@pytest.mark.docker
def test_stale_cleanup_keeps_a_live_owners_container(task, request):
    from swetrain.env.backend import open_workspace
    from swetrain.env.docker_client import LABEL, clean_stale, docker_client

    t = _on("docker", task, request)
    ws = open_workspace(t, sandbox="docker")
    try:
        clean_stale(docker_client())  # this process owns it and is alive: kept
        ids = [c.id for c in docker_client().containers.list(all=True, sparse=True, filters={"label": LABEL})]
        assert ws.container.id in ids
        assert ws.run("echo alive").output.strip() == "alive"
    finally:
        ws.close()


@pytest.mark.docker
def test_audit_finds_nothing_in_task_containers_and_finds_a_planted_leak(request, tmp_path):
    from swetrain.env.audit import audit_tasks
    from swetrain.tasks.builtin import load_builtin

    request.getfixturevalue("docker_ok")
    tasks = [_on("docker", t, request) for t in sorted(load_builtin("train"), key=lambda t: t.instance_id)[:1]]
    report = audit_tasks(tasks, sandbox="docker")
    assert report.clean, report.model_dump()
    leak = tasks[0].patch

    def plant(ws):
        ws.run("cat > /root/answer.diff", stdin=leak.encode())

    report = audit_tasks(tasks, sandbox="docker", prepare=plant)
    assert not report.clean and any("/root/answer.diff" in h.where for h in report.tasks[0].hits)


@pytest.mark.docker
@pytest.mark.slow
def test_build_image_and_cli_parity_on_builtin_tasks(request, tmp_path):
    """``swetrain env build-image`` then ``swetrain verify --sandbox docker`` == local, gold and empty."""
    request.getfixturevalue("docker_ok")
    out = tmp_path / "docker.jsonl"
    cli = [sys.executable, "-m", "swetrain.cli"]
    proc = subprocess.run([*cli, "env", "build-image", "--tasks", "builtin", "--limit", "2", "--seed", "3",
                           "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(r["environment"].startswith("docker://swetrain/task:") for r in rows)
    for row in rows:
        for name, patch in (("gold", row["patch"]), ("empty", "")):
            (tmp_path / "p.diff").write_text(patch)
            verdicts = []
            for sandbox in ("local", "docker"):
                p = subprocess.run([*cli, "verify", "--tasks", str(out), "--instance", row["instance_id"], "--patch",
                                    str(tmp_path / "p.diff"), "--json", "--sandbox", sandbox],
                                   capture_output=True, text=True)
                assert p.returncode == 0, p.stderr
                v = json.loads(p.stdout.strip().splitlines()[-1])
                v.pop("duration_s")
                verdicts.append(v)
            assert verdicts[0] == verdicts[1], (name, verdicts)
            assert verdicts[1]["resolved"] is (name == "gold")


@pytest.mark.docker
def test_container_killed_from_outside_is_infra(task, request):
    import threading

    from swetrain.env.tools import SandboxCrashed

    t = _on("docker", task, request)
    with open_workspace(t, sandbox="docker", limits=Limits(timeout_s=60)) as ws:
        killer = threading.Timer(1.5, lambda: ws.container.kill())
        killer.start()
        res = ws.run("sleep 30")
        killer.join()
        assert ws.crashed(res) and not res.timed_out and "killed from outside" in ws.crash_reason(res)
        with pytest.raises(SandboxCrashed):
            ToolRunner(ws).call("execute_bash", {"cmd": "echo hi"})
        ws.reset()  # a fresh container: usable again
        assert ws.run("echo hi").output.strip() == "hi" and not ws.crashed(ws.run("true"))


@pytest.mark.docker
@pytest.mark.slow
def test_rollout_runs_on_docker_and_leaves_no_container(request, tmp_path):
    from swetrain.tasks.builtin import load_builtin
    from swetrain.tasks.record import save_tasks

    task = _on("docker", sorted(load_builtin("heldout"), key=lambda t: t.instance_id)[0], request)
    save_tasks([task], tmp_path / "t.jsonl")
    proc = subprocess.run([sys.executable, "-m", "swetrain.cli", "rollout", "--tasks", str(tmp_path / "t.jsonl"),
                           "--policy", "scripted-repair", "--group", "1", "--attempts", "2", "--out",
                           str(tmp_path / "run"), "--sandbox", "docker", "--json"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["sandbox"] == "docker" and summary["trajectories"] >= 1 and summary["infra_failures"] == 0
    assert json.loads((tmp_path / "run" / "isolation.json").read_text())["backend"] == "docker"
    from swetrain.env.docker_client import LABEL, docker_client

    left = docker_client().containers.list(all=True, filters={"label": LABEL})
    assert [c for c in left if c.labels.get("swetrain.workspace") == task.instance_id] == []
