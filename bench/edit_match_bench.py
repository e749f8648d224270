"""Tolerant vs exact ``str_replace`` over stored trajectories (issue 31): replays every
``file_editor`` call of every stored attempt, in order, on a fresh workspace of its task, once with
``edit_match: exact`` and once with ``tolerant``, and counts the ``str_replace`` calls that apply.

Only ``file_editor`` calls are replayed (a file changed by a bash command in the original episode is
not), so each mode sees the files as its own earlier edits left them. Also reports what the stored
run itself recorded (its calls ran under the run's own mode) and the tolerant tiers that matched.

    python bench/edit_match_bench.py RUN_DIR [RUN_DIR ...] [--tasks builtin|FILE] [--json]

A RUN_DIR is any folder holding ``trajectories/`` (a rollout) or ``seed-*/trajectories`` (an eval).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path


def trajectory_dirs(run: Path) -> list[Path]:
    return sorted(p for p in [run / "trajectories", *run.glob("seed-*/trajectories")] if p.is_dir())


def file_editor_calls(messages: list[dict]) -> list[dict]:
    """The executed file_editor calls' arguments and stored outcome, in order."""
    return [
        {"arguments": m.get("arguments") or {}, "ok": bool(m.get("ok"))}
        for m in messages
        if m.get("role") == "tool" and m.get("name") == "file_editor" and isinstance(m.get("arguments"), dict)
    ]


def replay(task, calls: list[dict], mode: str) -> list[tuple[bool, str]]:
    """(ok, observation) of every str_replace among ``calls`` replayed in ``mode``."""
    from swetrain.env.tools import ToolRunner
    from swetrain.env.workspace import Workspace

    out = []
    with Workspace.create(task) as ws:
        tools = ToolRunner(ws, edit_match=mode)
        for call in calls:
            res = tools.call("file_editor", call["arguments"])
            if call["arguments"].get("command") == "str_replace":
                out.append((res.ok, res.observation))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--tasks", default="builtin", help="tasks of the runs: builtin or a tasks file")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    import pandas as pd
    from rich.console import Console
    from rich.table import Table

    from swetrain.tasks.builtin import load_builtin
    from swetrain.tasks.record import load_tasks

    tasks = {t.instance_id: t for t in (load_builtin() if args.tasks == "builtin" else load_tasks(args.tasks))}
    rows = []
    for run in args.runs:
        dirs = trajectory_dirs(run)
        if not dirs:
            print(f"{run}: no trajectories/ or seed-*/trajectories", file=sys.stderr)
            return 2
        stats: Counter = Counter()
        tiers: Counter = Counter()
        for d in dirs:
            df = pd.read_parquet(d, columns=["instance_id", "messages", "resolved", "attempt"])
            for iid, messages, resolved in zip(df["instance_id"], df["messages"], df["resolved"]):
                msgs = json.loads(messages) if isinstance(messages, str) else list(messages)
                calls = file_editor_calls(msgs)
                sr = [c for c in calls if c["arguments"].get("command") == "str_replace"]
                stats["attempts"] += 1
                stats["resolved"] += bool(resolved)
                stats["str_replace"] += len(sr)
                stats["stored_applied"] += sum(c["ok"] for c in sr)
                if not sr:
                    continue
                for mode in ("exact", "tolerant"):
                    results = replay(tasks[iid], calls, mode)
                    stats[f"{mode}_applied"] += sum(ok for ok, _ in results)
                    if mode == "tolerant":
                        for ok, obs in results:
                            tier = re.search(r"edit tier: ([a-z-]+)", obs)
                            tiers[tier.group(1) if ok and tier else ("exact" if ok else "refused")] += 1
                            if not ok:
                                kind = ("missing file" if "does not exist" in obs else "ambiguous" if
                                        ("ambiguous" in obs or "places" in obs or "occurs" in obs) else
                                        "weak" if "similar enough" in obs else "transfer" if "carried over" in obs
                                        else "other")
                                stats[f"refused_{kind}"] += 1
        rows.append({"run": str(run), **stats, "tiers": dict(tiers)})

    table = Table(title="str_replace calls that apply, replayed exact vs tolerant")
    for col in ("run", "attempts", "resolved", "str_replace", "stored applied", "exact", "tolerant", "tolerant tiers"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["run"], str(r["attempts"]), str(r["resolved"]), str(r["str_replace"]), str(r["stored_applied"]),
                      str(r.get("exact_applied", 0)), str(r.get("tolerant_applied", 0)),
                      ", ".join(f"{k} {v}" for k, v in sorted(r["tiers"].items())))
    Console(stderr=args.json).print(table)
    if args.json:
        print(json.dumps({"runs": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
