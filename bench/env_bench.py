"""Benchmark of the env layer: workspace reset vs copying, verifier vs the whole test suite.

Builds the demo task with ``--files`` extra modules (default 2,200, so the tree has > 2,000 files),
then measures (median of ``--repeat`` runs, all in this process, same machine, same tree):

- reset of a dirtied workspace (5 edited files, 20 untracked files, an ignored build folder, a
  chmod, a deleted file) with inotify change tracking, and with the full-scan fallback;
- baselines restoring the same dirtied copy: ``rm -rf`` + ``cp -a`` of the pristine tree, and
  ``rm -rf`` + ``git clone`` of the repository;
- ``Workspace.create``;
- the verifier on the task (F2P ∪ P2P only) vs running the repository's whole pytest suite;
- with ``--docker`` (needs a daemon and the base image): the docker backend on the same task —
  its reset (a fresh container of the image, exact: swapping in the spare started in the
  background, and starting a new one without a spare), creating a workspace (fresh container plus
  image lookup and start-up probe), and, for comparison, restoring only ``/testbed`` inside the
  running container (``git reset --hard`` + ``git clean -fdx`` + killing processes: faster, but
  *not* exact: writes outside the repository, e.g. ``/tmp`` or ``/root``, survive it); then the
  verifier's time per task on both backends over ``--verify-tasks`` built-in tasks (gold and empty
  patch each, verdicts compared; 255 = the whole suite).

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
    ap.add_argument("--docker", action="store_true", help="also measure the docker backend")
    ap.add_argument("--verify-tasks", type=int, default=6, help="built-in tasks verified on both backends (--docker)")
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
        docker = _docker_figures(task, args) if args.docker else {}
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
    if docker:
        rows += [
            ("docker: reset (spare container swapped in, exact)", f"{docker['docker_reset_ms']:8.2f} ms"),
            ("docker: reset (new container, no spare, exact)", f"{docker['docker_reset_no_spare_ms']:8.2f} ms"),
            ("docker: workspace create", f"{docker['docker_create_ms']:8.2f} ms"),
            ("docker: restore /testbed only (NOT exact)", f"{docker['docker_restore_testbed_ms']:8.2f} ms"),
            ("docker reset / local reset (inotify)", f"{docker['docker_reset_ms'] / reset_ms:8.2f}x (no spare: "
                                                     f"{docker['docker_reset_no_spare_ms'] / reset_ms:.1f}x)"),
            (f"verifier per task, gold patch, local ({docker['verify_tasks']} tasks)",
             f"{docker['verify_local_s_median']:8.2f} s median, {docker['verify_local_s_mean']:.2f} s mean"),
            ("verifier per task, gold patch, docker", f"{docker['verify_docker_s_median']:8.2f} s median, "
                                          f"{docker['verify_docker_s_mean']:.2f} s mean"),
            ("verdicts identical on both backends (gold+empty)", f"{docker['verdicts_identical']}/{docker['verdicts']}"),
        ]
        figures.update(docker)
    width = max(len(r[0]) for r in rows)
    print("env benchmark (median of %d runs)" % args.repeat)
    for name, val in rows:
        print(f"  {name:<{width}}  {val}")
    if args.json:
        print(json.dumps(figures))


def _docker_figures(task, args) -> dict:
    """The docker backend on the same task, and the verifier on built-in tasks on both backends."""
    from swetrain.env.docker_backend import DockerWorkspace
    from swetrain.env.images import build_images, ensure_task_image
    from swetrain.env.verifier import Verifier
    from swetrain.tasks.builtin import load_builtin

    t = time.perf_counter()
    tag, _ = ensure_task_image(task)
    image_s = time.perf_counter() - t
    dtask = task.model_copy(update={"environment": f"docker://{tag}"})
    dirty = ("for i in 1 2 3 4 5; do echo '# edited' >> filler/m$i.py 2>/dev/null; done; "
             "for i in $(seq 20); do echo x > scratch_$i.txt; done; mkdir -p build/lib && head -c 4096 /dev/zero > "
             "build/lib/out.so; chmod 600 README.md; rm -f calc/__init__.py; echo x > /tmp/t; sleep 300 &")
    ws = DockerWorkspace.create(dtask, spare=False)
    try:
        def reset_no_spare() -> float:
            ws.run(dirty)
            t = time.perf_counter()
            ws.reset()
            return time.perf_counter() - t

        reset_no_spare_ms = _median_ms(reset_no_spare, args.repeat)
        ws.spare = True
        ws._prepare_spare()

        def reset() -> float:
            ws.run(dirty)
            time.sleep(1.5)  # an attempt takes longer than starting the spare
            t = time.perf_counter()
            ws.reset()
            return time.perf_counter() - t

        reset_ms = _median_ms(reset, args.repeat)
        assert ws.diff() == "", "docker reset left changes behind"

        def restore_testbed() -> float:
            ws.run(dirty)
            t = time.perf_counter()
            ws.kill_all()
            ws.run("git reset -q --hard && git clean -q -fdx")
            return time.perf_counter() - t

        restore_ms = _median_ms(restore_testbed, args.repeat)
    finally:
        ws.close()

    def create() -> float:
        t = time.perf_counter()
        w = DockerWorkspace.create(dtask)
        d = time.perf_counter() - t
        w.close()
        return d

    create_ms = _median_ms(create, max(3, args.repeat // 2))
    tasks = sorted(load_builtin(), key=lambda t: t.instance_id)
    step = max(1, len(tasks) // max(1, args.verify_tasks))
    chosen = tasks[::step][: args.verify_tasks]
    dtasks, _ = build_images(chosen, log=lambda _m: None)
    times: dict[str, list[float]] = {"local": [], "docker": []}
    same = total = 0
    local, docker = Verifier(timeout_s=300, sandbox="local"), Verifier(timeout_s=300, sandbox="docker")
    for lt, dt in zip(chosen, dtasks):
        for patch in (lt.patch, ""):
            a, b = local.verify(lt, patch), docker.verify(dt, patch)
            if patch:  # the empty patch is refused before any workspace exists
                times["local"].append(a.duration_s)
                times["docker"].append(b.duration_s)
            da, db = a.model_dump(mode="json"), b.model_dump(mode="json")
            da.pop("duration_s"), db.pop("duration_s")
            total += 1
            same += da == db
    return {
        "docker_reset_ms": round(reset_ms, 2),
        "docker_reset_no_spare_ms": round(reset_no_spare_ms, 2),
        "docker_task_image_s": round(image_s, 2),
        "docker_create_ms": round(create_ms, 2),
        "docker_restore_testbed_ms": round(restore_ms, 2),
        "verify_tasks": len(chosen),
        "verify_local_s_median": round(statistics.median(times["local"]), 3),
        "verify_local_s_mean": round(statistics.mean(times["local"]), 3),
        "verify_docker_s_median": round(statistics.median(times["docker"]), 3),
        "verify_docker_s_mean": round(statistics.mean(times["docker"]), 3),
        "verdicts": total,
        "verdicts_identical": same,
    }


if __name__ == "__main__":
    main()
