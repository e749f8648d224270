"""Generate ``tasks.jsonl`` of the built-in suite with the synthesis pipeline.

    python -m swetrain.tasks.builtin.build [--repos a,b] [--per-repo 22] [--seed 0] [--no-verify]
    python -m swetrain.tasks.builtin.build --kinds crash --append --per-repo 8 [--repos a,b]

Each catalog repository goes through :class:`swetrain.tasks.synth.pipeline.Synthesizer` with the
current interpreter (built-in repos need nothing but pytest). Rows of repositories not rebuilt in
this run are kept, so the suite can be (re)generated one repository at a time. ``--kinds`` picks
the mutation kinds (default: the 13 standard kinds; ``crash`` = the easy tier's crash kinds; or a
comma-separated list). ``--append`` keeps *every* existing row byte for byte (its instance id,
base commit and text) and adds the new validated tasks of the chosen repositories next to them;
an id already in the file is not added twice. Splits:

* by repository: the repositories in :data:`HELDOUT_REPOS` are entirely ``heldout``;
* by task: in every other repository, a task is ``heldout`` when
  ``int(sha1(instance_id), 16) % 5 == 0`` (about 20%), otherwise ``train``.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

from swetrain.tasks.builtin import CATALOG_FILE, REPOS_DIR, TASKS_FILE, BuiltinError, load_catalog, repo_name
from swetrain.tasks.record import Task, load_tasks, save_tasks

# One repository per route is never trained on (chosen once; part of the suite's contract).
HELDOUT_REPOS: tuple[str, ...] = ("guardpass", "layoutbox", "sensorbuf")
HELDOUT_TASK_MODULUS = 5


def split_of(task: Task) -> str:
    if repo_name(task) in HELDOUT_REPOS:
        return "heldout"
    return "heldout" if int(hashlib.sha1(task.instance_id.encode()).hexdigest(), 16) % HELDOUT_TASK_MODULUS == 0 else "train"


def parse_kinds(spec: str) -> tuple[str, ...] | None:
    """``--kinds``: "" (the standard kinds: None), "crash", "standard" or a comma-separated list."""
    from swetrain.tasks.synth.mutate import ALL_KINDS, CRASH_KINDS, KINDS

    if not spec.strip():
        return None
    out: list[str] = []
    for k in (x.strip() for x in spec.split(",") if x.strip()):
        group = {"crash": CRASH_KINDS, "easy": CRASH_KINDS, "standard": KINDS}.get(k, (k,))
        for g in group:
            if g not in ALL_KINDS:
                raise ValueError(f"unknown mutation kind {g!r} (known: crash, standard, {', '.join(ALL_KINDS)})")
            if g not in out:
                out.append(g)
    return tuple(out)


def build_repo(entry: dict, per_repo: int, seed: int, verify: bool, log=print,
               kinds: tuple[str, ...] | None = None) -> tuple[list[Task], dict]:
    """Synthesize up to ``per_repo`` validated tasks on one catalog repository (``kinds``: the
    mutation kinds, default the standard ones)."""
    from swetrain.tasks.synth.pipeline import ProjectSpec, SynthConfig, Synthesizer
    from swetrain.tasks.synth.projects import Profile

    name = entry["name"]
    tree = REPOS_DIR / name
    if not (tree / "tests").is_dir():
        raise BuiltinError(f"built-in repository {name!r} has no tests/ folder")
    labels = {"domain": {"l1": entry.get("domain_l1"), "l2": entry.get("domain_l2")}}
    spec = ProjectSpec(name=name, tree=tree, python=Path(sys.executable), profile=Profile(paths=("tests",)),
                       repo=f"swetrain-builtin/{name}", instance_prefix=f"builtin__{name}", labels=labels,
                       route=entry.get("route"), autoload_plugins=False)
    config = SynthConfig(max_tasks=per_repo, seed=seed, verify=verify, max_candidates=per_repo * 4 + 10, kinds=kinds)
    with tempfile.TemporaryDirectory(prefix=f"swetrain-builtin-{name}-") as tmp:
        synth = Synthesizer(spec, Path(tmp) / "repo", config, log=lambda m: log(f"[{name}] {m}"))
        try:
            tasks = synth.run()
        finally:
            synth.cleanup()
    rows = []
    for t in tasks:
        t = t.model_copy(update={"source": None, "environment": None})
        t.split = split_of(t)
        rows.append(t)
    return rows, synth.report.to_dict()


def append_rows(existing: list[Task], new: list[Task]) -> list[Task]:
    """``existing`` unchanged plus the rows of ``new`` whose id is not there yet, in file order
    (repository, instance id). A new row must agree with its repository's clean commit."""
    clean = {repo_name(t): t.environment_setup_commit for t in existing}
    ids = {t.instance_id for t in existing}
    out = list(existing)
    for t in new:
        if t.instance_id in ids:
            continue
        name = repo_name(t)
        if name in clean and clean[name] != t.environment_setup_commit:
            raise BuiltinError(f"built-in repository {name!r} changed since its tasks were generated (clean commit "
                               f"{str(t.environment_setup_commit)[:12]} != {str(clean[name])[:12]}): "
                               "--append needs the same tree")
        ids.add(t.instance_id)
        out.append(t)
    return sorted(out, key=lambda t: (t.repo, t.instance_id))


def _check_rows_kept(before: bytes, path: Path) -> None:
    """Every line of the file as it was must still be in it, byte for byte."""
    now = set(path.read_bytes().splitlines())
    lost = [ln for ln in before.splitlines() if ln not in now]
    if lost:
        raise BuiltinError(f"{path}: --append changed or dropped {len(lost)} existing rows")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repos", default="", help="comma-separated catalog names (default: all)")
    ap.add_argument("--per-repo", type=int, default=22)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=TASKS_FILE)
    ap.add_argument("--kinds", default="", help="mutation kinds: 'crash' (the easy tier), 'standard' (default) "
                    "or a comma-separated list of kind names")
    ap.add_argument("--append", action="store_true", help="keep every existing row as it is and add the new tasks")
    ap.add_argument("--no-verify", action="store_true", help="skip the verifier acceptance (not for shipping)")
    args = ap.parse_args(argv)
    try:
        kinds = parse_kinds(args.kinds)
    except ValueError as exc:
        ap.error(f"--kinds: {exc}")
    catalog = load_catalog()
    wanted = [r for r in args.repos.split(",") if r] or [e["name"] for e in catalog]
    unknown = sorted(set(wanted) - {e["name"] for e in catalog})
    if unknown:
        ap.error(f"not in {CATALOG_FILE.name}: {', '.join(unknown)}")
    before = args.out.read_bytes() if args.out.exists() else b""
    existing = load_tasks(args.out) if args.out.exists() else []
    keep = existing if args.append else [t for t in existing if repo_name(t) not in set(wanted)]
    new: list[Task] = []
    for entry in catalog:
        if entry["name"] not in wanted:
            continue
        t0 = time.monotonic()
        rows, report = build_repo(entry, args.per_repo, args.seed, not args.no_verify, kinds=kinds)
        new += rows
        print(f"{entry['name']}: kept {report['kept']} of {report['candidates']} candidates "
              f"({report['rejected']}; kinds {report['kinds_kept']}) in {time.monotonic() - t0:.0f} s", flush=True)
        if args.append:
            tasks = append_rows(keep, new)
        else:
            tasks = sorted(keep + new, key=lambda t: (t.repo, t.instance_id))
        save_tasks(tasks, args.out)  # after every repository: progress survives an interruption
        if args.append:
            _check_rows_kept(before, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
