"""A pool of extra TRAIN-only tasks on the built-in repositories, used only to harvest
demonstrations for the SFT warm start (never for evaluation).

The shipped suite has 164 train tasks; a tiny model needs many more demonstrations than that to
learn the tool-call protocol and the localise -> read -> edit pattern. The pool re-runs the
synthesis pipeline (:mod:`swetrain.tasks.builtin.build`) on the train repositories with another
seed and a larger budget, then keeps a candidate only when

* its repository is not one of the held-out repositories,
* it is not already a task of the shipped suite (same instance id = same mutation), and
* it does not change a line that any held-out task changes (same file and line number), so a
  held-out task's fix location is never demonstrated.

Pool snapshots are materialised under their own cache folder (``cache_dir("builtin-pool")``), so
they never replace the shipped suite's snapshots that live workspaces point at.

    python -m swetrain.recipes.tiny.demo_pool --per-repo 40 --seed 1 --out pool.jsonl
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Iterable
from pathlib import Path

from swetrain.tasks.record import Task, save_tasks

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.M)


def changed_sites(patch: str) -> set[tuple[str, int]]:
    """(file, old line number) of every line a unified diff removes or replaces."""
    sites: set[tuple[str, int]] = set()
    path = ""
    line = 0
    removed = False  # the previous row removed a line: a following "+" replaces it
    for row in patch.splitlines():
        if row.startswith("--- "):
            continue
        if row.startswith("+++ "):
            path = row[4:].strip()
            path = path[2:] if path.startswith("b/") else path
            continue
        m = _HUNK.match(row)
        if m:
            line = int(m.group(1))
            continue
        if not path or not line:
            continue
        if row.startswith("-"):
            sites.add((path, line))
            line += 1
            removed = True
            continue
        if row.startswith("+"):
            if not removed:
                sites.add((path, line))  # a pure insertion counts as a change of the next line
            continue
        removed = False
        line += 1
    return sites


def filter_pool(candidates: Iterable[Task], shipped: Iterable[Task]) -> tuple[list[Task], dict[str, int]]:
    """Candidates that are new, in train repositories, and away from every held-out fix site."""
    from swetrain.tasks.builtin import repo_name
    from swetrain.tasks.builtin.build import HELDOUT_REPOS

    shipped = list(shipped)
    ids = {t.instance_id for t in shipped}
    patches = {t.patch for t in shipped}
    blocked: set[tuple[str, str, int]] = set()
    for t in shipped:
        if t.split == "heldout":
            blocked |= {(repo_name(t), f, n) for f, n in changed_sites(t.patch)}
    kept: list[Task] = []
    why = {"heldout_repo": 0, "in_suite": 0, "heldout_site": 0, "kept": 0}
    for t in candidates:
        name = repo_name(t)
        if name in HELDOUT_REPOS:
            why["heldout_repo"] += 1
        elif t.instance_id in ids or t.patch in patches:
            why["in_suite"] += 1
        elif any((name, f, n) in blocked for f, n in changed_sites(t.patch)):
            why["heldout_site"] += 1
        else:
            ids.add(t.instance_id)
            patches.add(t.patch)
            kept.append(t.model_copy(update={"split": "train"}))
            why["kept"] += 1
    return kept, why


def build_pool(per_repo: int, seed: int, out: Path, repos: list[str] | None = None, log=print) -> list[Task]:
    """Synthesize, filter and save the pool (saved after every repository)."""
    from swetrain.tasks.builtin import load_catalog, shipped_tasks
    from swetrain.tasks.builtin.build import HELDOUT_REPOS, build_repo

    shipped = shipped_tasks()
    pool: list[Task] = []
    for entry in load_catalog():
        name = entry["name"]
        if name in HELDOUT_REPOS or (repos and name not in repos):
            continue
        t0 = time.monotonic()
        rows, report = build_repo(entry, per_repo, seed, verify=False, log=lambda _m: None)
        kept, why = filter_pool(rows, [*shipped, *pool])
        pool += kept
        save_tasks(pool, out)
        log(f"{name}: {len(rows)} synthesized, {why} in {time.monotonic() - t0:.0f} s")
    return pool


def load_pool(path: str | Path) -> list[Task]:
    """Pool tasks with ``source`` pointing at snapshots under ``cache_dir("builtin-pool")``."""
    from swetrain.paths import cache_dir
    from swetrain.tasks.builtin import load_builtin

    return load_builtin(path=path, root=cache_dir("builtin-pool"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Synthesize extra train-only tasks for demonstrations.")
    ap.add_argument("--per-repo", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repos", default="", help="comma-separated built-in repositories (default: every train one)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    pool = build_pool(args.per_repo, args.seed, args.out, [r for r in args.repos.split(",") if r] or None)
    print(f"{len(pool)} pool tasks -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
