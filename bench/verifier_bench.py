"""Benchmark of the hardened verifier (issue 30) against the verifier as it was, in the same run.

For ``--tasks N`` built-in tasks (a seeded sample; 255 = all) it verifies the gold patch and the
empty patch with both verifiers, alternating which goes first per task so both see the same load:

- ``old``: ``Verifier(hardened=False)`` — the code path before issue 30 (``python -m pytest``,
  junit XML read in the workspace, header-parsed protection);
- ``hardened``: the default — changed paths from the trees, test files restored, the trusted runner
  with canaries and renamed FAIL_TO_PASS copies, the report read without following links.

Reports the median (and mean) seconds per gold verification of each, their ratio (target <= 1.5),
and whether every gold patch is FULL and every empty patch NO on both. Prints a table; with
``--json`` the last line is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=20, help="built-in tasks to verify (255 = all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    os.environ.setdefault("SWETRAIN_HOME", tempfile.mkdtemp(prefix="verifier-bench-"))
    from swetrain.env.sandbox import bwrap_available
    from swetrain.env.verifier import Verifier
    from swetrain.env.workspace import pristine_snapshot
    from swetrain.tasks.builtin import load_builtin

    tasks = sorted(load_builtin(), key=lambda t: t.instance_id)
    random.Random(args.seed).shuffle(tasks)
    tasks = sorted(tasks[: args.tasks], key=lambda t: t.instance_id)
    for t in tasks:  # snapshots are built once, outside the timings
        pristine_snapshot(t)
    arms = {"old": Verifier(timeout_s=120, test_timeout_s=30, hardened=False),
            "hardened": Verifier(timeout_s=120, test_timeout_s=30)}
    times: dict[str, list[float]] = {k: [] for k in arms}
    wrong: dict[str, list[str]] = {k: [] for k in arms}
    load0 = os.getloadavg()[0]
    for i, task in enumerate(tasks):
        order = list(arms) if i % 2 == 0 else list(reversed(arms))
        for name in order:
            start = time.perf_counter()
            gold = arms[name].verify(task, task.patch)
            times[name].append(time.perf_counter() - start)
            empty = arms[name].verify(task, "")
            if not gold.resolved or gold.status != "FULL":
                wrong[name].append(f"{task.instance_id}: gold {gold.status} {gold.error or gold.infra_reason or ''}"[:200])
            if empty.status != "NO" or empty.infra_failure:
                wrong[name].append(f"{task.instance_id}: empty {empty.status}")
        if not args.json:
            print(f"[{i + 1}/{len(tasks)}] {task.instance_id}: old {times['old'][-1]:.2f}s, "
                  f"hardened {times['hardened'][-1]:.2f}s", file=sys.stderr)
    med = {k: statistics.median(v) for k, v in times.items()}
    mean = {k: statistics.fmean(v) for k, v in times.items()}
    result = {
        "tasks": len(tasks),
        "isolation": "bwrap" if bwrap_available() else "none",
        "load_average_start": round(load0, 2),
        "load_average_end": round(os.getloadavg()[0], 2),
        "old_median_s": round(med["old"], 3),
        "hardened_median_s": round(med["hardened"], 3),
        "old_mean_s": round(mean["old"], 3),
        "hardened_mean_s": round(mean["hardened"], 3),
        "ratio_median": round(med["hardened"] / med["old"], 3),
        "target_ratio": 1.5,
        "gold_full_empty_no": {k: len(tasks) * 2 - len(v) for k, v in wrong.items()},
        "wrong": wrong,
    }
    print(f"verifier per task, gold patch, {len(tasks)} built-in tasks ({result['isolation']}, "
          f"load {result['load_average_start']} -> {result['load_average_end']})")
    print(f"{'verifier':10s} {'median':>8s} {'mean':>8s}  gold FULL + empty NO")
    for k in arms:
        print(f"{k:10s} {med[k]:7.2f}s {mean[k]:7.2f}s  {result['gold_full_empty_no'][k]}/{len(tasks) * 2}")
    print(f"hardened / old (median): {result['ratio_median']:.2f}x (target <= 1.5x)")
    for k, v in wrong.items():
        for w in v:
            print(f"  {k}: {w}")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
