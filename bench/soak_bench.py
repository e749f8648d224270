"""Soak benchmark: chains flowing for minutes through the rollout path; do resources stay flat?

A scripted policy keeps ``--chains`` (default 32) FC-SWE chains in flight for ``--minutes``
(default 10) on ``--cores`` (default 2) CPUs: as one chain finishes, the next starts. Each chain is
:func:`swetrain.rollout.engine.run_chain_job` (what both engine backends run) on a built-in task
(one per repository, train split), with the engine's pieces: a :class:`LockedPolicy` around one
shared :class:`ScriptedPolicy`, one :func:`build_verifier` verifier, a ``ChainJobConfig`` of two
attempts, results appended to a ``TrajectoryStore``. The scheduler is the engine's local loop
(a thread pool, ``wait(FIRST_COMPLETED)``) with an endless job list that stops at a deadline.

Every chain makes real tool calls in a bubblewrap workspace:

- attempt 1: ``execute_bash`` git status / ls, ``file_editor view`` of the file to fix, a wrong
  ``file_editor insert`` (a comment line), ``execute_bash`` pytest on one failing test, ``finish``;
  the verifier runs the task's tests on that patch (status NO), the workspace is reset;
- attempt 2 (recovery, prompt carries the failure context): ``execute_bash`` ``git apply`` of the
  fix from a heredoc, ``execute_bash`` git diff --stat, ``finish``; the verifier resolves it.

Measured, sampled every second (``/proc``): live processes descended from this one, zombies among
them, all processes on the machine, entries of this run's private temp folder (``TMPDIR``:
``swetrain-ws-*`` workspaces of chains and the verifier), open file descriptors (``/proc/self/fd``),
threads (``/proc/self/task``), resident memory (VmRSS). One row per interval (episodes/min,
gauges at the interval's end and their maximum in it). This process is made a child subreaper,
so a process that escapes its command (double fork, setsid) is re-parented here and counted; the
one orphan every sandboxed command leaves by design (bwrap's pid-namespace init, normally reaped
by the machine's pid 1) is reaped here and counted apart ("orphans").

Baseline in the same run: the first interval is the warm-up. After it the flow pauses: the chains
in flight drain, and (after ``gc.collect()``) an idle snapshot is the *start*; after the last
interval the same drain gives the *end*. Verdict "flat" when, end vs start: live processes,
zombies, temp folders, fds and threads are equal; resident memory grew < 10% or < 50 MB (the
warm-up absorbs lazy imports and caches; in-flight RSS at the end of the first and last intervals
is shown too, and, idle, glibc malloc bytes in use vs free-but-retained and the gc-tracked object
count: RSS that grows while those stay flat is allocator retention, not a leak). Throughput of
the last interval vs the warm-up is reported (shared machines depress and vary it), with the load
average at start and end. Exit status 1 when a measure is not flat.
Minutes are rounded to whole intervals (at least 2); each drain adds the latency of one chain.

Usage: python bench/soak_bench.py [--minutes 10] [--chains 32] [--interval-s 60] [--cores 2] [--json]
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

RSS_TOL_PCT = 10.0
RSS_TOL_MB = 50.0
EXACT = ("procs", "zombies", "tmp", "fds", "threads")


# ---------------------------------------------------------------------- gauges (from /proc)
def _proc_table() -> dict[int, tuple[int, str, int, str]]:
    """pid -> (ppid, state, session id, command name) of every process visible in /proc."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        close = stat.rfind(b")")
        rest = stat[close + 2 :].split()
        comm = stat[stat.find(b"(") + 1 : close].decode(errors="replace")
        out[int(entry)] = (int(rest[1]), rest[0].decode(), int(rest[3]), comm)
    return out


def _descendants(root: int, table: dict) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, *_rest) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reap_sandbox_orphans(table: dict) -> int:
    """Reap the zombies bubblewrap orphans on us (as our subreaper) and return how many.

    With ``--unshare-pid`` bwrap's monitor process exits as soon as the sandbox's init reported
    the exit code, before that init (another ``bwrap``, not a session leader) is gone: the init
    is re-parented to the nearest subreaper, normally the machine's pid 1, which reaps it. Our
    own children are all session leaders (``start_new_session``) or not ``bwrap``, so no
    ``Popen`` ever loses its child's status here.
    """
    me, n = os.getpid(), 0
    for pid, (ppid, state, sid, comm) in table.items():
        if ppid == me and state == "Z" and comm == "bwrap" and sid != pid:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    n += 1
            except ChildProcessError:
                pass
    return n


def gauges(tmp: Path) -> dict:
    table = _proc_table()
    orphans = reap_sandbox_orphans(table)
    if orphans:
        table = _proc_table()
    desc = _descendants(os.getpid(), table)
    zombies = sum(1 for p in desc if table[p][1] == "Z")
    entries = os.listdir(tmp)
    return {
        "procs": len(desc) - zombies,
        "zombies": zombies,
        "total_procs": len(table),
        "tmp": len(entries),
        "tmp_ws": sum(1 for e in entries if e.startswith("swetrain-ws-")),
        "fds": len(os.listdir("/proc/self/fd")) - 1,  # minus the one listdir itself holds
        "threads": len(os.listdir("/proc/self/task")),
        "rss_mb": round(_rss_mb(), 1),
        "load1": round(os.getloadavg()[0], 2),
        "orphans_reaped": orphans,
    }


def _make_subreaper() -> bool:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


# ---------------------------------------------------------------------- the scripted agent
def build_script(tasks: list) -> Callable:
    """A script playing, per task (found by its issue text in the prompt), a wrong first attempt
    and a recovery that applies the fix; every message is one real tool call."""
    from swetrain.agent.chains import CONTEXT_HEADER
    from swetrain.agent.format import tool_call_text
    from swetrain.env.verifier import patch_files

    plans = []
    for t in tasks:
        path = sorted(patch_files(t.patch))[0]
        test = t.FAIL_TO_PASS[0]
        first = [
            tool_call_text("execute_bash", {"cmd": "git status --short && ls"}),
            tool_call_text("file_editor", {"command": "view", "path": path}),
            tool_call_text("file_editor", {"command": "insert", "path": path, "insert_line": 0,
                                           "new_str": "# soak bench: a first attempt that fixes nothing\n"}),
            tool_call_text("execute_bash", {"cmd": f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -q -x "
                                                   f"-p no:cacheprovider {test} 2>&1 | tail -n 3"}),
        ]
        fix = [
            tool_call_text("execute_bash", {"cmd": f"git apply --verbose - <<'SOAK_EOF'\n{t.patch}SOAK_EOF"}),
            tool_call_text("execute_bash", {"cmd": "git diff --stat"}),
        ]
        plans.append((t.problem_statement.strip(), first, fix))
    finish = tool_call_text("finish", {"command": "submit"})

    def script(state) -> str:
        text = state.prompt_text
        for statement, first, fix in plans:
            if statement in text:
                turns = fix if CONTEXT_HEADER in text else first
                return turns[state.turn] if state.turn < len(turns) else finish
        raise ValueError("soak script: no known issue in the prompt")

    return script


# ---------------------------------------------------------------------- monitor
class Monitor:
    """Counts results; samples the gauges every ``sample_s``; closes a row at each interval end."""

    COLS = ("procs", "zombies", "total_procs", "tmp", "fds", "threads", "rss_mb", "load1")

    def __init__(self, tmp: Path, t0: float, sample_s: float = 1.0) -> None:
        self.tmp, self.t0, self.sample_s = tmp, t0, sample_s
        self.lock = threading.Lock()  # counters and rows
        self.sample_lock = threading.Lock()  # held while sampling (idle snapshots hold it too)
        self.stop = threading.Event()
        self.rows: list[dict] = []
        self.counts = {"episodes": 0, "chains": 0, "resolved_chains": 0, "resolved_first": 0,
                       "failed_chains": 0, "infra_retries": 0}
        self.plan: list[tuple[str, float | None]] = []  # (label, end time or None = closed by hand)
        self.row: dict | None = None
        self.orphans = 0  # sandbox inits reaped (see reap_sandbox_orphans), guarded by sample_lock
        self.thread = threading.Thread(target=self._loop, name="soak-monitor", daemon=True)

    def record(self, result) -> None:
        with self.lock:
            c = self.counts
            c["chains"] += 1
            c["episodes"] += len(result.trajectories)
            c["infra_retries"] += len(result.infra_errors) - (0 if result.ok else 1)
            if not result.ok:
                c["failed_chains"] += 1
            elif any(t.resolved for t in result.trajectories):
                c["resolved_chains"] += 1
                c["resolved_first"] += bool(result.trajectories[0].resolved)

    def schedule(self, rows: list[tuple[str, float | None]]) -> None:
        with self.lock:
            self.plan.extend(rows)
            if self.row is None:
                self._open(time.monotonic())

    def _open(self, start: float) -> None:
        if not self.plan:
            self.row = None
            return
        label, end = self.plan.pop(0)
        self.row = {"label": label, "start": start, "end": end, "counts0": dict(self.counts), "max": {},
                    "orphans0": self.orphans}

    def close_row(self) -> dict:
        """Close the rows whose end has passed, then the open-ended one (a drain), now."""
        with self.lock:
            while self.row is not None and self.row["end"] is not None and time.monotonic() >= self.row["end"]:
                self._close(self.row["end"])
            assert self.row is not None and self.row["end"] is None, "close_row: no open-ended row"
            return self._close(time.monotonic())

    def _close(self, at: float) -> dict:
        row = self.row
        assert row is not None
        g = self.sample()
        dur = max(at - row["start"], 1e-9)
        done = {k: self.counts[k] - row["counts0"][k] for k in self.counts}
        out = {
            "interval": len(self.rows) + 1,
            "label": row["label"],
            "t_start_s": round(row["start"] - self.t0, 1),
            "t_end_s": round(at - self.t0, 1),
            **done,
            "episodes_per_min": round(60 * done["episodes"] / dur, 2),
            "chains_per_min": round(60 * done["chains"] / dur, 2),
            "orphans_reaped": self.orphans - row["orphans0"],
            "end": g,
            "max": {k: max(row["max"].get(k, g[k]), g[k]) for k in ("procs", "tmp", "fds", "threads", "rss_mb")},
        }
        self.rows.append(out)
        print(format_row(out), flush=True)
        self._open(at)
        return out

    def sample(self) -> dict:
        with self.sample_lock:
            g = gauges(self.tmp)
            self.orphans += g.pop("orphans_reaped")
            return g

    def _loop(self) -> None:
        while not self.stop.wait(self.sample_s):
            g = self.sample()
            with self.lock:
                row = self.row
                if row is None:
                    continue
                for k in ("procs", "tmp", "fds", "threads", "rss_mb"):
                    row["max"][k] = max(row["max"].get(k, g[k]), g[k])
                if row["end"] is not None and time.monotonic() >= row["end"]:
                    self._close(row["end"])


HEADER = (f"{'interval':<14} {'t_end_s':>7} {'episodes':>8} {'eps/min':>8} {'chains/min':>10} {'resolved':>8}"
          f" {'procs end/max':>13} {'zomb':>4} {'all procs':>9} {'tmp end/max':>11} {'fds end/max':>11}"
          f" {'threads':>7} {'RSS MB end/max':>15} {'load1':>6} {'orphans':>7}")


def format_row(r: dict) -> str:
    e, m = r["end"], r["max"]
    res = f"{r['resolved_chains']}/{r['chains']}"
    return (f"{r['label']:<14} {r['t_end_s']:>7.0f} {r['episodes']:>8} {r['episodes_per_min']:>8.1f}"
            f" {r['chains_per_min']:>10.1f} {res:>8} {e['procs']:>6}/{m['procs']:<6} {e['zombies']:>4}"
            f" {e['total_procs']:>9} {e['tmp']:>5}/{m['tmp']:<5} {e['fds']:>5}/{m['fds']:<5} {e['threads']:>7}"
            f" {e['rss_mb']:>7.0f}/{m['rss_mb']:<7.0f} {e['load1']:>6.2f} {r['orphans_reaped']:>7}")


# ---------------------------------------------------------------------- the flow
def flow(tasks, policy, verifier, config, store, monitor: Monitor, workers: int, deadline: float,
         next_chain: list[int]) -> None:
    """The engine's local scheduler (``RolloutEngine._run_local``) with an endless job list:
    keep ``workers`` chain jobs running until ``deadline``, then let the running ones finish."""
    from swetrain.rollout.engine import run_chain_job

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="swetrain-chain") as pool:
        running: dict = {}
        while True:
            while time.monotonic() < deadline and len(running) < workers:
                n = next_chain[0]
                next_chain[0] += 1
                task, chain = tasks[n % len(tasks)], n // len(tasks)
                running[pool.submit(run_chain_job, task, chain, policy, verifier, config)] = (task, chain)
            if not running:
                return
            left = deadline - time.monotonic()
            finished, _ = wait(list(running), timeout=left if left > 0 else None, return_when=FIRST_COMPLETED)
            for fut in finished:
                running.pop(fut)
                result = fut.result()
                if result.ok:
                    store.append(result.trajectories)
                monitor.record(result)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]


def heap() -> dict:
    """Where resident memory sits: glibc malloc bytes in use / free but retained (all arenas), and
    the objects the garbage collector tracks. RSS growth with flat in-use bytes and object counts
    is allocator retention (fragmentation across the worker threads' arenas), not a leak."""
    out: dict = {"gc_objects": len(gc.get_objects())}
    try:
        fn = ctypes.CDLL(None).mallinfo2  # glibc >= 2.33
        fn.restype = _MallInfo2
        mi = fn()
        out["malloc_in_use_mb"] = round((mi.uordblks + mi.hblkhd) / 2**20, 1)
        out["malloc_free_mb"] = round(mi.fordblks / 2**20, 1)
    except (OSError, AttributeError):
        pass
    return out


def idle_snapshot(monitor: Monitor) -> dict:
    """Gauges (and :func:`heap`) with no chain in flight, after a full garbage collection."""
    gc.collect()
    time.sleep(0.5)  # let the kernel finish tearing down exited sandboxes
    return {**monitor.sample(), "heap": heap()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="flow time, warm-up interval included")
    ap.add_argument("--chains", type=int, default=32, help="chains in flight (engine workers)")
    ap.add_argument("--interval-s", type=float, default=60.0, help="one row per interval; the first is the warm-up")
    ap.add_argument("--cores", type=int, default=2, help="CPUs this process and its commands may use (affinity)")
    ap.add_argument("--tasks", type=int, default=0, help="built-in tasks used, one per repository (0 = all)")
    ap.add_argument("--json", action="store_true", help="print one JSON object of the figures as the last line")
    args = ap.parse_args()

    total_s = 60 * args.minutes
    n_rows = max(2, round(total_s / args.interval_s))
    interval = total_s / n_rows
    cpus = sorted(os.sched_getaffinity(0))[: args.cores]
    os.sched_setaffinity(0, cpus)  # before any thread or child exists: all inherit it
    subreaper = _make_subreaper()

    root = Path(tempfile.mkdtemp(prefix="swetrain-soak-"))
    tmp = root / "tmp"
    tmp.mkdir()
    os.environ["TMPDIR"] = str(tmp)  # workspaces (chains and verifier) go here, nobody else's
    tempfile.tempdir = str(tmp)

    from swetrain.agent.loop import EpisodeLimits
    from swetrain.agent.scripted import ScriptedPolicy, load_tokenizer
    from swetrain.env.sandbox import bwrap_available
    from swetrain.policy.tiny import ensure_tiny
    from swetrain.policy.wrappers import LockedPolicy
    from swetrain.rollout.engine import ChainJobConfig, build_verifier
    from swetrain.rollout.store import TrajectoryStore
    from swetrain.tasks.builtin import load_builtin

    by_repo: dict = {}
    for t in sorted(load_builtin("train"), key=lambda t: t.instance_id):
        by_repo.setdefault(t.repo, t)
    tasks = list(by_repo.values())[: args.tasks or None]
    config = ChainJobConfig(group=1, attempts=2, seed=0,
                           limits=EpisodeLimits(max_turns=8, max_tokens_per_call=2048, max_context_tokens=16384))
    scripted = ScriptedPolicy(load_tokenizer(str(ensure_tiny())), build_script(tasks))
    scripted.history = type(scripted.history)(maxlen=16)  # test aid, not the rollout path
    policy = LockedPolicy(scripted)  # what RolloutEngine gives its workers for a policy not thread_safe
    verifier = build_verifier(config.verify_timeout_s)

    load_start = os.getloadavg()
    print(f"soak: {args.chains} chains in flight for {args.minutes:g} min on {len(cpus)} CPUs {cpus}, "
          f"{n_rows} intervals of {interval:.0f} s (first = warm-up), {len(tasks)} built-in tasks, 2 attempts/chain, "
          f"isolated={bwrap_available()}, subreaper={subreaper}, "
          f"tmp={tmp}", flush=True)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in load_start)} ({os.cpu_count()} CPUs on the machine)",
          flush=True)

    t0 = time.monotonic()
    monitor = Monitor(tmp, t0)
    before = monitor.sample()
    print(HEADER, flush=True)
    next_chain = [0]
    try:
        monitor.thread.start()
        # warm-up: interval 1, then drain -> idle "start"
        monitor.schedule([("1 (warm-up)", t0 + interval), ("drain", None)])
        flow(tasks, policy, verifier, config, TrajectoryStore(root / "run-warmup"), monitor, args.chains,
             t0 + interval, next_chain)
        start = idle_snapshot(monitor)
        monitor.close_row()  # the drain + idle check row
        # main: intervals 2..n, then drain -> idle "end"
        t1 = time.monotonic()
        monitor.schedule([(str(i), t1 + (i - 1) * interval) for i in range(2, n_rows + 1)] + [("drain", None)])
        flow(tasks, policy, verifier, config, TrajectoryStore(root / "run-main"), monitor, args.chains,
             t1 + (n_rows - 1) * interval, next_chain)
        end = idle_snapshot(monitor)
        monitor.close_row()  # the final drain row
    except KeyboardInterrupt:  # the pool's exit has let the running chains finish; clean up, no verdict
        print("interrupted", flush=True)
        sys.exit(130)
    finally:
        monitor.stop.set()
        monitor.thread.join(timeout=10)
        shutil.rmtree(root, ignore_errors=True)
    load_end = os.getloadavg()
    wall = time.monotonic() - t0

    rows = monitor.rows
    timed = [r for r in rows if r["label"] != "drain"]
    first, last = timed[0], timed[-1]
    verdicts = {}
    for k in EXACT:
        verdicts[k] = {"start": start[k], "end": end[k], "tolerance": "equal", "flat": end[k] == start[k]}
    rss0, rss1 = start["rss_mb"], end["rss_mb"]
    growth = rss1 - rss0
    verdicts["rss_mb"] = {
        "start": rss0, "end": rss1, "tolerance": f"< +{RSS_TOL_PCT:g}% or < +{RSS_TOL_MB:g} MB",
        "flat": growth < RSS_TOL_MB or growth < rss0 * RSS_TOL_PCT / 100,
        "growth_mb": round(growth, 1), "growth_pct": round(100 * growth / rss0, 1),
        "in_flight_first_mb": first["end"]["rss_mb"], "in_flight_last_mb": last["end"]["rss_mb"],
    }
    all_flat = all(v["flat"] for v in verdicts.values())

    print()
    print("resource verdicts (start = idle after the warm-up interval drained, end = idle after the last interval "
          "drained; both after gc.collect())")
    names = {"procs": "live child processes", "zombies": "zombie children", "tmp": "temp folders (TMPDIR entries)",
             "fds": "open fds (/proc/self/fd)", "threads": "threads", "rss_mb": "resident memory MB"}
    width = max(len(v) for v in names.values())
    print(f"  {'measure':<{width}}  {'start':>8}  {'end':>8}  {'tolerance':<34} verdict")
    for k, v in verdicts.items():
        print(f"  {names[k]:<{width}}  {v['start']:>8}  {v['end']:>8}  {v['tolerance']:<34} "
              f"{'flat' if v['flat'] else 'GROWING'}")
    tp0, tp1 = first["episodes_per_min"], last["episodes_per_min"]
    main_rows = [r for r in timed if r is not first]
    main_s = sum(r["t_end_s"] - r["t_start_s"] for r in main_rows)
    steady = round(60 * sum(r["episodes"] for r in main_rows) / main_s, 2) if main_s else 0.0
    total = {k: sum(r[k] for r in rows) for k in monitor.counts}
    rel = f"{100 * tp1 / tp0:.0f}% of warm-up" if tp0 else "warm-up finished none in flight"
    print(f"  throughput: warm-up {tp0:.1f} episodes/min, last interval {tp1:.1f} ({rel}); "
          f"intervals 2-{last['label']}: {steady:.1f} episodes/min; "
          f"{total['episodes']} episodes, {total['chains']} chains ({total['resolved_chains']} resolved, "
          f"{total['resolved_first']} on attempt 1, {total['failed_chains']} failed, "
          f"{total['infra_retries']} infra retries) in {wall:.0f} s")
    print(f"  RSS growth: {growth:+.1f} MB ({100 * growth / rss0:+.1f}%); in flight ({args.chains} chains): "
          f"{first['end']['rss_mb']:.0f} MB at the end of the warm-up interval, {last['end']['rss_mb']:.0f} MB at the "
          f"end of interval {last['label']}")
    h0, h1 = start["heap"], end["heap"]
    if "malloc_in_use_mb" in h0:
        print(f"  heap (idle): malloc in use {h0['malloc_in_use_mb']:.1f} -> {h1['malloc_in_use_mb']:.1f} MB, "
              f"malloc free but retained {h0['malloc_free_mb']:.1f} -> {h1['malloc_free_mb']:.1f} MB, "
              f"gc-tracked objects {h0['gc_objects']} -> {h1['gc_objects']}")
    print(f"  before the flow (idle, cold): procs {before['procs']}, tmp {before['tmp']}, fds {before['fds']}, "
          f"threads {before['threads']}, RSS {before['rss_mb']:.0f} MB; sandbox inits reaped as orphans: "
          f"{monitor.orphans}; this run's temp root left after cleanup: {'yes' if root.exists() else 'no'}")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in load_start)}; "
          f"at end: {' '.join(f'{x:.2f}' for x in load_end)}")
    print(f"verdict: {'FLAT (no leak seen)' if all_flat else 'LEAK SUSPECTED'}")

    figures = {
        "minutes": args.minutes, "chains_in_flight": args.chains, "interval_s": round(interval, 1),
        "cpus": len(cpus), "tasks": len(tasks), "wall_s": round(wall, 1),
        "episodes": total["episodes"], "chains": total["chains"], "resolved_chains": total["resolved_chains"],
        "failed_chains": total["failed_chains"], "infra_retries": total["infra_retries"],
        "warmup_episodes_per_min": tp0, "last_episodes_per_min": tp1, "steady_episodes_per_min": steady,
        "episodes_per_min": [r["episodes_per_min"] for r in timed],
        "verdicts": verdicts, "flat": all_flat,
        "before": before, "start": start, "end": end, "sandbox_orphans_reaped": monitor.orphans,
        "load_start": [round(x, 2) for x in load_start], "load_end": [round(x, 2) for x in load_end],
        "rows": rows,
    }
    if args.json:
        print(json.dumps(figures, sort_keys=True))
    sys.exit(0 if all_flat else 1)


if __name__ == "__main__":
    main()
