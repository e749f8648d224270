"""Evaluation throughput benchmark: chains in flight x how their generate calls share the model.

Real agent episodes with the quickstart's protocol and sampling settings (held-out tasks of the
built-in suite, 1 chain x up to 2 attempts, temperature 0.5, 6 turns, 192 new tokens per turn,
3,072 context tokens, sandboxed tools and verifier). Each arm evaluates the same tasks with the
same decoding seeds:

* ``locked``: the generate calls of the chains in flight run one at a time behind a lock (the
  engine without ``batch_generation``; the quickstart's setting before continuous batching);
* ``continuous``: the calls share one running batch, rows joining and leaving at every decode step
  (``swetrain.policy.wrappers.continuous``).

The figure is wall time for the whole evaluation; the arms must agree on every outcome (rows do
not depend on the batch). The first arm in the list is the baseline.

Usage: python bench/eval_batching_bench.py [--policy tiny-sft] [--tasks 12]
           [--arms locked:2,continuous:2,continuous:4,continuous:8] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def parse_arms(text: str) -> list[tuple[str, int]]:
    arms = []
    for item in text.split(","):
        mode, _, workers = item.strip().partition(":")
        if mode not in ("locked", "continuous") or not workers.isdigit() or int(workers) < 1:
            raise SystemExit(f"--arms: {item!r} is not locked:N or continuous:N")
        arms.append((mode, int(workers)))
    return arms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default="tiny-sft")
    ap.add_argument("--tasks", type=int, default=12, help="held-out tasks (seeded sample)")
    ap.add_argument("--arms", default="locked:2,continuous:2,continuous:4,continuous:8")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    arms = parse_arms(args.arms)

    from swetrain.eval.evaluate import evaluate_policy
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.spec import resolve_policy_path
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.recipes.tiny.quickstart import heldout_sample
    from swetrain.rollout.store import TrajectoryStore

    configure_torch_threads()
    tasks = heldout_sample(args.tasks, args.seed)
    path = resolve_policy_path(args.policy)
    rows = []
    outcomes = {}
    with tempfile.TemporaryDirectory(prefix="swetrain-evalbatch-") as tmp:
        for mode, workers in arms:
            policy = HFPolicy(path)  # a fresh model and prefix cache per arm
            out = Path(tmp) / f"{mode}-{workers}"
            t0 = time.monotonic()
            result = evaluate_policy(policy, tasks, out, chains=1, attempts=2, seed=args.seed + 12345, max_turns=6,
                                     max_new_tokens=192, max_context_tokens=3072, temperature=0.5, workers=workers,
                                     batch_generation=(mode == "continuous"))
            wall = time.monotonic() - t0
            trajs = TrajectoryStore(out / f"seed-{args.seed + 12345}").read_all()  # run_eval: one store per seed
            tokens = sum(sum(t.assistant_mask[t.prompt_len:]) for t in trajs)
            outcomes[(mode, workers)] = result.per_task
            rows.append({"arm": f"{mode}:{workers}", "wall_s": round(wall, 1), "episodes": len(trajs),
                         "generated_tokens": int(tokens), "tokens_per_s": round(tokens / wall, 1),
                         "resolved_at_2": result.resolved_at_2})
    base = rows[0]["wall_s"]
    for row in rows:
        row["speedup"] = round(base / row["wall_s"], 2)
    first = next(iter(outcomes.values()))
    same = all(o == first for o in outcomes.values())
    print(f"{'arm':<16}{'wall s':>8}{'episodes':>10}{'tokens':>9}{'tok/s':>8}{'speedup':>9}{'R@2':>7}")
    for row in rows:
        print(f"{row['arm']:<16}{row['wall_s']:>8}{row['episodes']:>10}{row['generated_tokens']:>9}"
              f"{row['tokens_per_s']:>8}{row['speedup']:>9}{row['resolved_at_2']:>7.2f}")
    print(f"same outcomes in every arm: {same}")
    if args.json:
        print(json.dumps({"policy": args.policy, "tasks": args.tasks, "arms": rows, "same_outcomes": same}))


if __name__ == "__main__":
    main()
