"""Benchmark of the env layer: workspace reset vs copying, verifier vs the whole test suite.

Builds the demo task with ``--files`` extra modules (default 2,200, so the tree has > 2,000 files),
then measures (median of ``--repeat`` runs, all in this process, same machine, same tree):

- reset of a dirtied workspace (5 edited files, 20 untracked files, an ignored build folder, a
  chmod, a deleted file) with inotify change tracking, and with the full-scan fallback;
- baselines restoring the same dirtied copy: ``rm -rf`` + ``cp -a`` of the pristine tree, and
  ``rm -rf`` + ``git clone`` of the repository;
- ``Workspace.create``;
- the verifier on the task (F2P ∪ P2P only) vs running the repository's whole pytest suite.

Prints a table; with ``--json`` the last line is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def _dirty(path: Path) -> None:
    files = sorted((path / "filler").rglob("m*.py"))
    for f in files[:5]:
        f.write_text(f.read_text() + "# edited\n")
    for i in range(20):
        (path / f"scratch_{i}.txt").write_text("x" * 100)
    (path / "build" / "lib").mkdir(parents=True, exist_ok=True)
    (path / "build" / "lib" / "out.so").write_bytes(b"\0" * 4096)
    os.chmod(path / "README.md", 0o600)
    (path / "calc" / "__init__.py").unlink()


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = fn()
        times.append(t)
    return 1000 * statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=2200, help="extra modules in the generated repo")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object (last line)")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="swetrain-envbench-"))
    os.environ["SWETRAIN_HOME"] = str(tmp / "home")
    from swetrain.env.demo import build_demo_task
    from swetrain.env.verifier import Verifier
    from swetrain.env.workspace import Workspace

    try:
        task = build_demo_task(tmp / "task", filler_files=args.files)
        n_files = int(subprocess.run(["git", "-C", str(task.source_path()), "ls-files"], capture_output=True,
                                     text=True).stdout.count("\n"))
        t0 = time.perf_counter()
        ws = Workspace.create(task, root=tmp / "ws")
        first_create = time.perf_counter() - t0

        def reset_inotify() -> float:
            _dirty(ws.path)
            t = time.perf_counter()
            ws.reset()
            return time.perf_counter() - t

        reset_ms = _median_ms(reset_inotify, args.repeat)
        watcher_used = ws._watcher is not None
        saved = ws._watcher
        ws._watcher = None

        def reset_scan() -> float:
            _dirty(ws.path)
            t = time.perf_counter()
            ws.reset()
            return time.perf_counter() - t

        scan_ms = _median_ms(reset_scan, args.repeat)
        ws._watcher = saved
        ws._watch()
        assert ws.diff() == "", "reset left changes behind"

        copy_dir = tmp / "copy"
        subprocess.run(["cp", "-a", str(ws.pristine), str(copy_dir)], check=True)

        def reset_cp() -> float:
            _dirty(copy_dir)
            t = time.perf_counter()
            shutil.rmtree(copy_dir)
            subprocess.run(["cp", "-a", str(ws.pristine), str(copy_dir)], check=True)
            return time.perf_counter() - t

        cp_ms = _median_ms(reset_cp, args.repeat)
        clone_dir = tmp / "clone"
        subprocess.run(["git", "clone", "-q", str(task.source_path()), str(clone_dir)], check=True)

        def reset_clone() -> float:
            _dirty(clone_dir)
            t = time.perf_counter()
            shutil.rmtree(clone_dir)
            subprocess.run(["git", "clone", "-q", str(task.source_path()), str(clone_dir)], check=True)
            return time.perf_counter() - t

        clone_ms = _median_ms(reset_clone, args.repeat)

        def create() -> float:
            t = time.perf_counter()
            w = Workspace.create(task, root=tmp / "ws2")
            d = time.perf_counter() - t
            w.close()
            return d

        create_ms = _median_ms(create, max(3, args.repeat // 2))

        verifier = Verifier(timeout_s=600)
        t = time.perf_counter()
        verdict = verifier.verify(task, task.patch)
        verify_s = time.perf_counter() - t
        ws.run("git apply -", stdin=task.patch.encode())
        ws.run("git apply -", stdin=task.test_patch.encode())
        t = time.perf_counter()
        suite = ws.run("python -m pytest -q -p no:cacheprovider", timeout=600)
        suite_s = time.perf_counter() - t
        suite_summary = suite.output.strip().splitlines()[-1] if suite.output.strip() else ""
        isolated = ws.isolated
        ws.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    figures = {
        "tracked_files": n_files,
        "isolated": isolated,
        "inotify": watcher_used,
        "reset_ms": round(reset_ms, 2),
        "reset_full_scan_ms": round(scan_ms, 2),
        "cp_a_ms": round(cp_ms, 2),
        "git_clone_ms": round(clone_ms, 2),
        "speedup_vs_cp_a": round(cp_ms / reset_ms, 1),
        "speedup_full_scan_vs_cp_a": round(cp_ms / scan_ms, 1),
        "speedup_vs_git_clone": round(clone_ms / reset_ms, 1),
        "workspace_create_ms": round(create_ms, 2),
        "first_create_with_snapshot_ms": round(1000 * first_create, 2),
        "verify_s": round(verify_s, 3),
        "verify_status": verdict.status,
        "whole_suite_s": round(suite_s, 3),
        "whole_suite_summary": suite_summary,
    }
    rows = [
        ("repository", f"{n_files} tracked files, isolated={isolated}, inotify={watcher_used}"),
        ("reset (inotify)", f"{reset_ms:8.2f} ms"),
        ("reset (full-scan fallback)", f"{scan_ms:8.2f} ms"),
        ("baseline rm -rf + cp -a", f"{cp_ms:8.2f} ms   -> reset is {cp_ms / reset_ms:.1f}x faster "
                                    f"(full scan {cp_ms / scan_ms:.1f}x)"),
        ("baseline rm -rf + git clone", f"{clone_ms:8.2f} ms   -> reset is {clone_ms / reset_ms:.1f}x faster"),
        ("Workspace.create (snapshot cached)", f"{create_ms:8.2f} ms"),
        ("verifier, F2P+P2P (4 tests)", f"{verify_s:8.2f} s    ({verdict.status})"),
        ("whole test suite", f"{suite_s:8.2f} s    ({suite_summary})"),
    ]
    width = max(len(r[0]) for r in rows)
    print("env benchmark (median of %d runs)" % args.repeat)
    for name, val in rows:
        print(f"  {name:<{width}}  {val}")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
