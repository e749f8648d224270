"""Rollout faults, each caused for real (no mocks): a sandbox or a Ray actor killed mid-episode, a
truncated or corrupt Parquet part, the disk filling up, verifier timeouts and sandbox crashes.

Built-in tasks, a scripted policy (it applies the task's gold patch with ``git apply``, after an
optional ``sleep`` that gives the fault a window), real bubblewrap sandboxes, the real verifier,
Ray on 127.0.0.1. See docs/agent.md, "Faults".
"""

from __future__ import annotations

import errno
import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from swetrain.agent.loop import EpisodeLimits
from swetrain.agent.scripted import ScriptedPolicy, TurnScript, bash_call, make_scripted
from swetrain.env.sandbox import bwrap_available
from swetrain.env.verifier import Verifier
from swetrain.rollout.engine import ChainJobConfig, RolloutEngine
from swetrain.rollout.store import DiskFullError, StoreError, TrajectoryStore

WINDOW = "swetrain-fault-window"  # marks the agent command a test kills
needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="a killed sandbox is told apart from the agent's own signals only under bubblewrap")


# ---------------------------------------------------------------------------------------------- helpers
@pytest.fixture(scope="module")
def tokenizer_path():
    from swetrain.policy.tiny import ensure_tiny

    return str(ensure_tiny())


@pytest.fixture(scope="module")
def task():
    from swetrain.tasks.builtin import load_builtin

    return sorted(load_builtin(split="train"), key=lambda t: t.instance_id)[0]


def gold_script(task, window_s: float = 0.0) -> TurnScript:
    """Apply the task's gold patch (after sleeping ``window_s`` in a marked command), then finish."""
    turns = [bash_call(f"sleep {window_s:g}; : {WINDOW}")] if window_s else []  # bash stays the parent: its cmdline names the window
    turns.append(bash_call(f"git apply <<'SWETRAIN_EOF'\n{task.patch}SWETRAIN_EOF"))
    return TurnScript(turns)


def factory(task, tokenizer_path, window_s: float = 0.0):
    """A picklable policy spec (Ray actors build their own policy from it)."""
    return functools.partial(make_scripted, gold_script(task, window_s), tokenizer_path)


@pytest.fixture(scope="module")
def tokenizer(tokenizer_path):
    from swetrain.agent.scripted import load_tokenizer

    return load_tokenizer(tokenizer_path)


def gold_policy(tokenizer, task, window_s: float = 0.0) -> ScriptedPolicy:
    return ScriptedPolicy(tokenizer, gold_script(task, window_s))


def config(**kw) -> ChainJobConfig:
    base = dict(group=2, attempts=2, seed=7, verify_timeout_s=120,
                limits=EpisodeLimits(max_turns=4, max_tokens_per_call=2048, max_context_tokens=16384))
    base.update(kw)
    return ChainJobConfig(**base)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _ppid(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[1])


def _ancestors(pid: int):
    while pid > 1:
        yield pid
        pid = _ppid(pid)


class Killer(threading.Thread):
    """Once a process whose command line holds ``needle`` runs, SIGKILL the ancestor ``pick`` chooses
    (``times`` times, one process each); records what it killed."""

    def __init__(self, needle: str, pick, times: int = 1, timeout_s: float = 120.0):
        super().__init__(daemon=True)
        self.needle, self.pick, self.times, self.deadline = needle, pick, times, time.monotonic() + timeout_s
        self.killed: list[tuple[int, str]] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        done: set[int] = set()
        while len(self.killed) < self.times and time.monotonic() < self.deadline and not self.stopped.is_set():
            for entry in os.listdir("/proc"):
                if not entry.isdigit() or int(entry) in done or self.needle not in _cmdline(int(entry)):
                    continue
                target = self.pick(int(entry))
                if target is None or target in done:
                    continue
                cmd = _cmdline(target)
                try:
                    os.kill(target, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                done.update({int(entry), target})
                self.killed.append((target, cmd))
                break
            time.sleep(0.01)

    def __enter__(self) -> Killer:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.join(5)


def own_sandbox(pid: int) -> int | None:
    """The sandbox (bwrap) process of this test process that ``pid`` runs in."""
    me = os.getpid()
    return next((a for a in _ancestors(pid) if _ppid(a) == me and _cmdline(a).startswith("bwrap")), None)


def ray_actor(pid: int) -> int | None:
    """The Ray actor process ``pid`` runs under."""
    return next((a for a in _ancestors(pid) if _cmdline(a).startswith("ray::")), None)


def assert_complete(store: TrajectoryStore, task, group: int) -> list:
    """Every chain stored exactly once, resolved at attempt 1 (the gold patch), no duplicate rows."""
    trajs = store.read_all()
    keys = [(t.instance_id, t.chain, t.attempt) for t in trajs]
    assert len(keys) == len(set(keys)), f"duplicate rows: {keys}"
    assert sorted(keys) == [(task.instance_id, c, 1) for c in range(group)]
    assert all(t.resolved and t.verdict is not None and not t.verdict.infra_failure for t in trajs)
    assert store.count() == len(trajs)
    return trajs


def fill(folder: Path) -> Path:
    """Write a file until the filesystem says ENOSPC; return it (delete it to free the space)."""
    filler = folder / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for chunk in (1 << 20, 1 << 16, 1 << 12, 1):
            while True:
                try:
                    os.write(fd, b"\0" * chunk)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC, exc
                    break
    finally:
        os.close(fd)
    return filler


# ---------------------------------------------------------------------- (a) killed mid-episode
@needs_bwrap
def test_sandbox_killed_mid_episode_local_chain_is_retried(task, tokenizer, tmp_path):
    """A worker thread's episode dies (its sandbox SIGKILLed while it runs a command): the chain is
    retried, and the step's data is complete with no duplicate rows."""
    engine = RolloutEngine(gold_policy(tokenizer, task, window_s=1.5), backend="local", workers=2, config=config())
    with Killer(WINDOW, own_sandbox) as killer:
        report = engine.run([task], tmp_path / "run")
    assert len(killer.killed) == 1 and killer.killed[0][1].startswith("bwrap"), killer.killed
    assert report.infra_failures == 1 and report.infra_retries == 1
    assert report.chains_done == 2 and not report.skipped_tasks
    assert_complete(TrajectoryStore(tmp_path / "run"), task, 2)


@pytest.mark.slow  # Ray start-up alone takes ~20 s on 2 shared cores
def test_ray_actor_killed_mid_episode_chain_is_retried(task, tokenizer_path, tmp_path):
    """A Ray actor SIGKILLed (os.kill of its pid) while it runs an episode: the actor is replaced,
    the chain runs again, the data is complete with no duplicate rows."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, _node_ip_address="127.0.0.1")
    try:
        engine = RolloutEngine(policy_factory=factory(task, tokenizer_path, window_s=3), backend="ray",
                               workers=2, config=config(group=3))
        with Killer(WINDOW, ray_actor) as killer:
            report = engine.run([task], tmp_path / "run")
    finally:
        ray.shutdown()
    assert len(killer.killed) == 1 and killer.killed[0][1].startswith("ray::"), killer.killed
    assert report.infra_failures == 1 and report.chains_done == 3 and not report.skipped_tasks
    assert_complete(TrajectoryStore(tmp_path / "run"), task, 3)


# ---------------------------------------------------------------------- (b) truncated / corrupt parts
def finish_policy(tokenizer) -> ScriptedPolicy:
    return ScriptedPolicy(tokenizer, TurnScript([]))  # finish at once: an empty patch, no test run


def test_corrupt_part_is_a_named_error_and_resume_drops_it(task, tokenizer, tmp_path):
    run = tmp_path / "run"
    engine = RolloutEngine(finish_policy(tokenizer), backend="local", config=config(group=3, attempts=1))
    engine.run([task], run)
    store = TrajectoryStore(run)
    parts = sorted(store.dir.glob("part-*.parquet"))
    assert len(parts) == 3
    truncated, garbage = parts[1], parts[2]
    data = truncated.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])  # a write cut short
    raw = bytearray(garbage.read_bytes())
    raw[len(raw) // 3 : len(raw) // 3 + 64] = os.urandom(64)  # bytes overwritten inside the data
    garbage.write_bytes(bytes(raw))

    with pytest.raises(StoreError, match=rf"{truncated.name} is unreadable \(corrupt or truncated, \d+ bytes\): .*magic bytes"):
        store.read_all()
    with pytest.raises(StoreError, match=truncated.name):
        store.count()
    problems = dict(store.check())
    assert set(problems) == {truncated, garbage} and all("corrupt or truncated" in v for v in problems.values())

    report = engine.run([task], run)  # resume (the default): drop both parts, re-run their chains
    assert sorted(report.dropped_parts) == [str(truncated), str(garbage)]
    assert report.chains_resumed == 1 and report.chains_done == 2
    trajs = store.read_all()
    assert sorted((t.chain, t.attempt) for t in trajs) == [(0, 1), (1, 1), (2, 1)]
    assert len(pd.read_parquet(run / "trajectories")) == 3  # the dropped files are out of every reader's way
    assert len(list(store.dir.glob(".part-*.corrupt"))) == 2


@pytest.mark.slow  # two CLI processes
def test_rollout_cli_resume_drops_a_truncated_part(task, tokenizer_path, tmp_path):
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "swetrain.cli", "rollout", "--tasks", "builtin", "--split", "train", "--limit", "1",
           "--policy", f"scripted:finish:{tokenizer_path}", "--group", "2", "--attempts", "1", "--max-turns", "2",
           "--out", str(run), "--json"]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    part = run / "trajectories" / "part-00000001.parquet"
    part.write_bytes(part.read_bytes()[:100])
    res = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["dropped_parts"] == [str(part)] and summary["chains_resumed"] == 1 and summary["chains_done"] == 1
    rows = TrajectoryStore(run).read_rows()
    assert sorted((r["chain"], r["attempt"]) for r in rows) == [(0, 1), (1, 1)]


# ---------------------------------------------------------------------- (c) disk full
def test_disk_full_while_storing_is_a_named_error_and_resume_completes(task, tokenizer, tmpfs):
    run = tmpfs("4m") / "run"
    engine = RolloutEngine(finish_policy(tokenizer), backend="local", config=config(group=2, attempts=1))
    engine.run([task], run)
    store = TrajectoryStore(run)
    before = store.read_rows()
    filler = fill(run.parent)

    engine.config = config(group=4, attempts=1)
    with pytest.raises(DiskFullError) as info:
        engine.run([task], run)
    err = info.value
    assert err.errno == errno.ENOSPC and str(err).startswith("disk full while writing trajectory part ")
    assert "part-00000002.parquet" in str(err) and err.filename.endswith("part-00000002.parquet")
    assert store.read_rows() == before  # what was stored is intact
    assert not list(store.dir.glob(".part-*"))  # no half-written part left behind

    filler.unlink()
    report = engine.run([task], run)
    assert report.chains_resumed == 2 and report.chains_done == 2
    keys = [(r["chain"], r["attempt"]) for r in store.read_rows()]
    assert sorted(keys) == [(c, 1) for c in range(4)]


# ---------------------------------------------------------------------- (d) infra, never scored
def test_verifier_timeout_is_an_infra_failure_never_scored(task, tokenizer, tmp_path):
    """The whole test run exceeding the verifier's limit is infra: retried, then the task is
    skipped; no attempt is stored (so none can enter a batch with reward 0)."""
    engine = RolloutEngine(gold_policy(tokenizer, task), Verifier(timeout_s=0.2), backend="local",
                           config=config(group=2, max_infra_retries=1))
    report = engine.run([task], tmp_path / "run")
    assert report.infra_failures == 2 and report.chains_done == 0 and report.chains_skipped == 2
    assert "infra failure after 2 tries" in report.skipped_tasks[task.instance_id]
    assert "exceeded 0.2s" in report.skipped_tasks[task.instance_id]
    assert TrajectoryStore(tmp_path / "run").count() == 0


@needs_bwrap
def test_sandbox_crashes_are_infra_failures(task, tokenizer, tmp_path):
    # the agent's sandbox killed on every try: given up as infra, nothing scored
    engine = RolloutEngine(gold_policy(tokenizer, task, window_s=30), backend="local",
                           config=config(group=1, max_infra_retries=1))
    with Killer(WINDOW, own_sandbox, times=2) as killer:
        report = engine.run([task], tmp_path / "agent")
    assert len(killer.killed) == 2
    assert report.infra_failures == 2 and report.chains_done == 0 and report.chains_skipped == 1
    assert "killed by SIGKILL" in report.skipped_tasks[task.instance_id]
    assert TrajectoryStore(tmp_path / "agent").count() == 0

    # the verifier's sandbox killed while it runs the tests: infra, retried, stored once
    engine = RolloutEngine(gold_policy(tokenizer, task), backend="local", config=config(group=1))
    results = []
    with Killer("--swetrain-test-timeout", own_sandbox) as killer:
        report = engine.run([task], tmp_path / "verify", on_result=results.append)
    assert len(killer.killed) == 1
    assert report.infra_failures == 1 and report.chains_done == 1 and not report.skipped_tasks
    assert "the sandbox was killed (signal 9) while running the tests" in results[0].infra_errors[0]
    assert_complete(TrajectoryStore(tmp_path / "verify"), task, 1)
