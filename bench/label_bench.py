"""Benchmark: offline labeling of SWE-bench Verified (default ../shared/data/swebench_verified.jsonl).

Compares the full offline backend (decision-record signals + packaged MiniLM embeddings) against
the signals-only baseline in the same run; reports wall time, rows/s and agreement between the two.
Target: the 500 Verified instances in under 2 minutes on 2 CPU cores. ``--json`` prints one JSON
object with the figures as the last line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

DEFAULT_INPUT = Path(__file__).resolve().parents[2] / "shared" / "data" / "swebench_verified.jsonl"


def _run(rows, use_embeddings: bool) -> tuple[float, list[dict]]:
    from swetrain.label.labeler import Labeler

    t0, c0 = time.perf_counter(), time.process_time()
    out = Labeler("offline", use_embeddings=use_embeddings).label_rows(rows)
    _run.cpu = time.process_time() - c0  # type: ignore[attr-defined]
    return time.perf_counter() - t0, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", nargs="?", default=str(DEFAULT_INPUT))
    ap.add_argument("--limit", type=int, default=None, help="only the first N rows")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (the target machine has 2 cores)")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object on the last line")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    path = Path(args.input)
    if not path.exists():
        print(f"error: {path}: file does not exist", file=sys.stderr)
        return 2
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()][: args.limit]
    t_load = time.perf_counter()
    from swetrain.label.embed import shared_embedder

    shared_embedder()
    load_s = time.perf_counter() - t_load
    base_s, base = _run(rows, use_embeddings=False)
    base_cpu = _run.cpu  # type: ignore[attr-defined]
    full_s, full = _run(rows, use_embeddings=True)
    full_cpu = _run.cpu  # type: ignore[attr-defined]
    load_avg = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    agree = {axis: sum(a["labels"][axis]["l1"] == b["labels"][axis]["l1"] for a, b in zip(base, full)) / max(1, len(rows))
             for axis in ("task_type", "domain")}
    routes = Counter(r["route"] for r in full)
    figures = {
        "rows": len(rows), "threads": args.threads, "model_load_s": round(load_s, 2),
        "signals_only_s": round(base_s, 2), "signals_only_rows_per_s": round(len(rows) / base_s, 1),
        "offline_s": round(full_s, 2), "offline_rows_per_s": round(len(rows) / full_s, 1),
        "signals_only_cpu_s": round(base_cpu, 2), "offline_cpu_s": round(full_cpu, 2),
        "load_average_1min": None if load_avg is None else round(load_avg, 2),
        "offline_total_with_load_s": round(full_s + load_s, 2), "target_s": 120, "meets_target": full_s + load_s < 120,
        "agreement_task_type_l1": round(agree["task_type"], 3), "agreement_domain_l1": round(agree["domain"], 3),
        "routes": {str(k): v for k, v in sorted(routes.items(), key=lambda kv: str(kv[0]))},
    }
    print(f"offline labeling of {len(rows)} rows from {path.name} ({args.threads} torch threads)")
    print(f"{'backend':<34}{'wall s':>10}{'cpu s':>10}{'rows/s':>10}")
    print(f"{'signals only (baseline)':<34}{base_s:>10.1f}{base_cpu:>10.1f}{len(rows) / base_s:>10.1f}")
    print(f"{'signals + MiniLM embeddings':<34}{full_s:>10.1f}{full_cpu:>10.1f}{len(rows) / full_s:>10.1f}")
    print(f"{'  + one-off model load':<34}{load_s:>10.1f}")
    if load_avg is not None:
        print(f"machine load average during the run: {load_avg:.1f} (other processes share the cores)")
    print(f"target < 120 s for 500 rows: {'met' if figures['meets_target'] else 'NOT met'}; "
          f"L1 agreement with baseline: task type {agree['task_type']:.0%}, domain {agree['domain']:.0%}")
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
