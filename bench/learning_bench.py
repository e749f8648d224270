"""Learning benchmark (not a CI test): does RL improve the base policy on held-out tasks?

For each seed: evaluate the base policy on the held-out split (Resolved@1, Resolved@2, conditional
recovery; attempt 2 sees the failed patch + verifier diagnostics), then train a copy with GRPO and a
copy with FC-SWE for the same number of RL steps and the same trajectory budget per step
(GRPO: 2G independent attempts per task; FC-SWE: G chains x up to 2 attempts), and evaluate both.
Prints mean +- standard deviation over seeds; ``--json`` prints one JSON object as the last line.

    python bench/learning_bench.py --seeds 0,1,2 --steps 6 --eval-tasks 24 [--policy tiny-sft] [--json]

``--train-tasks FILE`` trains on a tasks file instead of the built-in train split, e.g. the RL
frontier that ``swetrain curriculum select`` writes from a mastery map (paper 000: RL on tasks the
base solves sometimes). ``--eval-on train`` then evaluates on those same training tasks as well
(the paper's post-RL mastery refresh), next to the held-out split.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

KEYS = ("resolved_at_1", "resolved_at_2", "conditional_recovery")


def run_seed(seed: int, args: argparse.Namespace, root: Path) -> dict[str, dict[str, float]]:
    from swetrain.eval.evaluate import evaluate_policy
    from swetrain.policy.hf import HFPolicy
    from swetrain.train.config import load_config
    from swetrain.policy.spec import resolve_policy_path
    from swetrain.recipes.tiny.quickstart import QUICKSTART_ROLLOUT, _heldout
    from swetrain.train.rl import RLTrainer

    base = resolve_policy_path(args.policy)
    heldout = _heldout(args.eval_tasks, 0)  # the same held-out tasks for every seed and arm
    suites = {"heldout": heldout} if heldout else {}
    if args.eval_on == "train":
        from swetrain.tasks.record import load_tasks

        suites["train"] = load_tasks(args.train_tasks)
    common = [f"train.steps={args.steps}", f"train.save_every={args.steps}", f"seed={seed}",
              f"rollout.tasks_per_step={args.tasks_per_step}", "logging.progress=false", "logging.tensorboard=false",
              *QUICKSTART_ROLLOUT, *([f"tasks.source={args.train_tasks}"] if args.train_tasks else [])]
    ro = load_config("fcswe", overrides=list(QUICKSTART_ROLLOUT)).rollout  # the quickstart's sampling settings
    ev = dict(chains=args.eval_chains, attempts=2, context_variant="patch+verifier", seed=1000 + seed,
              max_turns=ro.max_turns, max_new_tokens=ro.max_new_tokens, max_context_tokens=ro.max_context_tokens,
              temperature=ro.temperature, workers=ro.workers)
    out: dict[str, dict[str, float]] = {}
    t0 = time.monotonic()

    def evaluate(policy, name: str) -> None:
        for suite, tasks in suites.items():
            key = name if suite == "heldout" else f"{name}@train"
            out[key] = evaluate_policy(policy, tasks, root / f"s{seed}-{key}-eval", **ev).headline()

    evaluate(HFPolicy(base), "base")
    arms = {
        "grpo": load_config("grpo", overrides=[*common, f"rollout.group={2 * args.group}"]),
        "fcswe": load_config("fcswe", overrides=[*common, f"rollout.group={args.group}"]),
    }
    for name, cfg in arms.items():
        cfg.policy = str(base)
        trainer = RLTrainer(cfg, root / f"s{seed}-{name}", policy_path=base)
        trainer.train()
        evaluate(trainer.policy, name)
        del trainer
    print(f"seed {seed}: {json.dumps(out)} ({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--eval-tasks", type=int, default=24)
    ap.add_argument("--eval-chains", type=int, default=1)
    ap.add_argument("--tasks-per-step", type=int, default=3)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--policy", default="tiny-sft")
    ap.add_argument("--out", type=Path, default=None, help="keep run folders here (default: a temp folder)")
    ap.add_argument("--train-tasks", type=Path, default=None, help="train on this tasks file (e.g. the curriculum frontier)")
    ap.add_argument("--eval-on", choices=["heldout", "train"], default="heldout",
                    help="train: also evaluate on the --train-tasks tasks")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.eval_on == "train" and args.train_tasks is None:
        ap.error("--eval-on train needs --train-tasks FILE")
    if args.eval_tasks < 1 and args.eval_on != "train":
        ap.error("--eval-tasks must be >= 1 (or evaluate on --train-tasks with --eval-on train)")
    from swetrain.policy.threads import configure_torch_threads

    configure_torch_threads()
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="swetrain-learning-") as tmp:
        root = args.out or Path(tmp)
        results = [run_seed(s, args, Path(root)) for s in seeds]
    arms = tuple(k for k in ("base", "grpo", "fcswe", "base@train", "grpo@train", "fcswe@train") if k in results[0])
    if not arms:
        raise SystemExit("nothing was evaluated")
    table: dict[str, dict[str, dict[str, float]]] = {}
    for arm in arms:
        table[arm] = {}
        for key in KEYS:
            vals = [r[arm][key] for r in results]
            table[arm][key] = {"mean": statistics.fmean(vals), "std": statistics.pstdev(vals) if len(vals) > 1 else 0.0, "values": vals}
    print(f"\nheld-out: {args.eval_tasks} tasks x {args.eval_chains} chain(s), {len(seeds)} seeds, "
          f"{args.steps} RL steps x {args.tasks_per_step} tasks, policy {args.policy}")
    print(f"{'arm':12s} {'Resolved@1':>16s} {'Resolved@2':>16s} {'Cond. recovery':>16s}")
    for arm in arms:
        cells = [f"{100 * table[arm][k]['mean']:6.1f} ± {100 * table[arm][k]['std']:4.1f}%" for k in KEYS]
        print(f"{arm:12s} " + " ".join(f"{c:>16s}" for c in cells))
    if args.json:
        print(json.dumps({"config": {k: str(v) for k, v in vars(args).items()}, "results": table,
                          "seconds": round(time.monotonic() - started, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
