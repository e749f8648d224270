"""``swetrain view`` benchmark: render time and page size on a run directory.

Measures, on RUN_DIR (any run: rollout, eval, train, quickstart, experts):

1. the command end to end (``swetrain view RUN_DIR --out FILE``, a fresh process: CLI start-up
   included), median of ``--repeats``; target: under 10 s for ~350 episodes (the quickstart's size);
2. the same work in process, by stage: reading the run (Parquet parts, records, labels), finding the
   tokenizer, building the episodes, the page data, the HTML (gzip + base64);
3. the page: size on disk, the data's JSON size before compression, episodes and tokens held;
4. ``--serve``: building the index (light columns only) and the median time to read one episode;
5. with ``--browser`` (chromium + chromedriver + selenium): seconds until the page is ready (data
   decompressed and parsed, table drawn) and until one episode's tokens are drawn.

Without RUN_DIR, ``--build DIR`` first makes a run of ~350 episodes the cheap way: the scripted
repair agent on 60 held-out built-in tasks x 3 chains x up to 2 attempts
(``swetrain rollout --policy scripted-repair``), or reuses DIR when it already holds one.

Usage: python bench/view_bench.py [RUN_DIR | --build DIR] [--repeats 3] [--browser] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _swetrain() -> list[str]:
    exe = shutil.which("swetrain")
    return [exe] if exe else [sys.executable, "-m", "swetrain.cli"]


def build_run(out: Path, tasks: int, group: int, workers: int) -> None:
    if (out / "trajectories").is_dir() and any((out / "trajectories").glob("part-*.parquet")):
        return  # resumes nothing: an existing run is taken as is
    cmd = [*_swetrain(), "rollout", "--tasks", "builtin", "--split", "heldout", "--limit", str(tasks),
           "--policy", "scripted-repair", "--group", str(group), "--attempts", "2", "--workers", str(workers),
           "--out", str(out), "--json"]
    print("building the run:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def bench_cli(run: Path, repeats: int) -> dict:
    import resource

    times, cpu = [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "view.html"
        for _ in range(repeats):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            res = subprocess.run([*_swetrain(), "view", str(run), "--out", str(out)], capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
            if res.returncode != 0:
                raise SystemExit(f"swetrain view failed: {res.stderr.strip()}")
        size = out.stat().st_size
    return {"cli_s": statistics.median(times), "cli_runs_s": [round(t, 2) for t in times], "cli_cpu_s": statistics.median(cpu),
            "load_avg_1m": os.getloadavg()[0], "cpus": os.cpu_count(), "page_bytes": size}


def bench_stages(run: Path) -> dict:
    from swetrain.view import build as B
    from swetrain.view.html import compact_json, render_page
    from swetrain.view.load import iter_rows, open_run, task_labels
    from swetrain.view.tokens import find_vocab

    st: dict[str, float] = {}
    t0 = time.perf_counter()
    r = open_run(run)
    labels = task_labels(r)
    rows = list(iter_rows(r))
    st["read_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    max_id = max((int(max(row["token_ids"])) for *_, row in rows if row.get("token_ids") is not None and len(row["token_ids"])), default=-1)
    find_vocab(r, None, max_id)
    st["tokenizer_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    view = B.build_run(run)  # everything again, episodes included
    st["build_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    data = B.page_data([view])
    st["page_data_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    page = render_page(data)
    st["render_html_s"] = time.perf_counter() - t0
    tokens = sum(d["tokens"]["n"] for d in view.episodes.values())
    return {**st, "episodes": len(view.index), "tasks": len({e["iid"] for e in view.index}), "tokens": tokens,
            "json_bytes": len(compact_json(data).encode()), "html_bytes": len(page.encode()), "labels": len(labels),
            "tokenizer": view.vocab.path, "notes": len(view.run.notes)}


def bench_serve(run: Path, n: int = 20) -> dict:
    from swetrain.view.build import build_run, load_episode

    t0 = time.perf_counter()
    view = build_run(run, details=False)
    index_s = time.perf_counter() - t0
    keys = [e["key"] for e in view.index][:: max(1, len(view.index) // n)][:n]
    times = []
    for k in keys:
        t0 = time.perf_counter()
        load_episode(view, k)
        times.append(time.perf_counter() - t0)
    return {"serve_index_s": index_s, "serve_episode_ms": 1000 * statistics.median(times) if times else None}


def bench_browser(run: Path) -> dict:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return {"browser": "skipped: selenium not installed"}
    if not (os.path.exists("/usr/bin/chromium") and os.path.exists("/usr/bin/chromedriver")):
        return {"browser": "skipped: /usr/bin/chromium or /usr/bin/chromedriver missing"}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "view.html"
        subprocess.run([*_swetrain(), "view", str(run), "--out", str(out)], check=True, capture_output=True)
        opts = webdriver.ChromeOptions()
        opts.binary_location = "/usr/bin/chromium"
        for f in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  f"--user-data-dir={tmp}/profile", "--window-size=1400,1000"):
            opts.add_argument(f)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
        try:
            t0 = time.perf_counter()
            driver.get(out.as_uri())
            while not driver.execute_script("return document.body.dataset.ready === '1'"):
                if time.perf_counter() - t0 > 120:
                    return {"browser": "page not ready after 120 s"}
                time.sleep(0.02)
            ready = time.perf_counter() - t0
            t0 = time.perf_counter()
            driver.execute_script("openEpisode(S.filtered[0].key)")
            while not driver.execute_script("return document.querySelectorAll('#ep-tokens .tokens .tk').length > 0"):
                time.sleep(0.02)
            episode = time.perf_counter() - t0
        finally:
            driver.quit()
    return {"browser_ready_s": ready, "browser_episode_s": episode}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", nargs="?", type=Path, help="a run directory (default: --build)")
    ap.add_argument("--build", type=Path, default=None, help="make (or reuse) a ~350-episode rollout run here")
    ap.add_argument("--tasks", type=int, default=60)
    ap.add_argument("--group", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--browser", action="store_true", help="also time the page in chromium (selenium)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    run = args.run
    if run is None:
        if args.build is None:
            ap.error("give RUN_DIR or --build DIR")
        build_run(args.build, args.tasks, args.group, args.workers)
        run = args.build
    result: dict = {"run": str(run)}
    result.update(bench_cli(run, args.repeats))
    result.update(bench_stages(run))
    result.update(bench_serve(run))
    if args.browser:
        result.update(bench_browser(run))
    result["target_met"] = result["cli_s"] < 10.0

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"swetrain view on {run} ({result['episodes']} episodes, {result['tokens']} tokens)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    rows = [
        ("swetrain view, end to end (median)", f"{result['cli_s']:.2f} s  (target < 10 s: {'met' if result['target_met'] else 'NOT met'})"),
        ("  its CPU time (user + sys, median)", f"{result['cli_cpu_s']:.2f} s  (load average {result['load_avg_1m']:.1f} on {result['cpus']} CPUs)"),
        ("  read run (parts, records, labels)", f"{result['read_s']:.2f} s"),
        ("  find + load tokenizer", f"{result['tokenizer_s']:.2f} s"),
        ("  build episodes (in process, incl. reading)", f"{result['build_s']:.2f} s"),
        ("  page data", f"{result['page_data_s']:.2f} s"),
        ("  HTML (gzip + base64)", f"{result['render_html_s']:.2f} s"),
        ("page size", f"{result['page_bytes'] / 1e6:.2f} MB"),
        ("data JSON before compression", f"{result['json_bytes'] / 1e6:.2f} MB"),
        ("--serve: index (light columns)", f"{result['serve_index_s']:.2f} s"),
        ("--serve: one episode (median)", f"{result['serve_episode_ms']:.0f} ms" if result.get("serve_episode_ms") is not None else "-"),
    ]
    if "browser_ready_s" in result:
        rows += [("chromium: page ready", f"{result['browser_ready_s']:.2f} s"),
                 ("chromium: one episode drawn", f"{result['browser_episode_s']:.2f} s")]
    elif "browser" in result:
        rows.append(("chromium", result["browser"]))
    for name, value in rows:
        table.add_row(name, value)
    Console(file=sys.stderr if args.json else sys.stdout).print(table)
    if args.json:
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in result.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
