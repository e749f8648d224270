"""Synthesis throughput and verifier cost: built-in repo and one PyPI project.

    python bench/synth_bench.py [--repo statlite] [--pypi h11==0.16.0] [--max-tasks 4] [--no-pypi] [--json]

For each source: tasks kept per minute of synthesis (prepare + candidates + verifier acceptance),
candidates per kept task, and verifier seconds per task (gold patch). Baseline measured in the same
run: one clean run of the project's whole suite (the cost unit of a candidate).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _measure(spec, workdir: Path, max_tasks: int, seed: int) -> dict:
    from swetrain.env.verifier import Verifier
    from swetrain.tasks.synth.api import synthesize
    from swetrain.tasks.synth.pipeline import SynthConfig

    t0 = time.monotonic()
    tasks, rep = synthesize(spec, None, SynthConfig(max_tasks=max_tasks, seed=seed), workdir)
    wall = time.monotonic() - t0
    v = Verifier(timeout_s=180)
    times = []
    for t in tasks:
        verdict = v.verify(t, t.patch)
        assert verdict.resolved, (t.instance_id, verdict.diagnostics)
        times.append(verdict.duration_s)
    return {
        "source": spec.instance_prefix,
        "clean_suite_s": round(rep.clean_run_s, 2),
        "candidates": rep.candidates,
        "kept": rep.kept,
        "rejected": rep.rejected,
        "synth_wall_s": round(wall, 1),
        "tasks_per_min": round(60 * rep.kept / wall, 2) if wall else 0.0,
        "s_per_task": round(wall / rep.kept, 1) if rep.kept else None,
        "acceptance_s_per_task": round(rep.verify_s / rep.kept, 2) if rep.kept else None,
        "verifier_s_per_task": round(statistics.mean(times), 2) if times else None,
        "verify_vs_clean_suite": round(statistics.mean(times) / rep.clean_run_s, 2) if times and rep.clean_run_s else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default="statlite", help="built-in repository")
    ap.add_argument("--pypi", default="h11==0.16.0")
    ap.add_argument("--no-pypi", action="store_true")
    ap.add_argument("--max-tasks", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from swetrain.tasks.builtin import REPOS_DIR, load_catalog
    from swetrain.tasks.synth.api import prepare_pypi
    from swetrain.tasks.synth.pipeline import ProjectSpec
    from swetrain.tasks.synth.projects import Profile

    rows = []
    with tempfile.TemporaryDirectory(prefix="swetrain-synth-bench-") as tmp:
        entry = {e["name"]: e for e in load_catalog()}[args.repo]
        spec = ProjectSpec(name=args.repo, tree=REPOS_DIR / args.repo, python=Path(sys.executable),
                           profile=Profile(paths=("tests",)), repo=f"swetrain-builtin/{args.repo}",
                           instance_prefix=f"builtin__{args.repo}", route=entry.get("route"),
                           labels={"domain": {"l1": entry.get("domain_l1")}}, autoload_plugins=False)
        rows.append(_measure(spec, Path(tmp) / "builtin", args.max_tasks, args.seed))
        if not args.no_pypi:
            wd = Path(tmp) / "pypi"
            wd.mkdir()
            rows.append(_measure(prepare_pypi(args.pypi, wd), wd, args.max_tasks, args.seed))
    cols = ["source", "clean_suite_s", "candidates", "kept", "tasks_per_min", "s_per_task",
            "acceptance_s_per_task", "verifier_s_per_task", "verify_vs_clean_suite"]
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in cols]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for r in rows:
        print("  ".join(str(r[c]).ljust(w) for c, w in zip(cols, widths)))
    if args.json:
        print(json.dumps({"rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
