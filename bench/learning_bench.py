"""Learning benchmark (not a CI test): does RL improve the base policy on held-out tasks, and
does FC-SWE beat GRPO at the same rollout budget?

For each seed: evaluate the base policy on the held-out split twice -- in feedback mode (attempt 2
sees the failed patch + verifier diagnostics) and in resample mode (attempt 2 is an independent
fresh sample) -- then train one copy with FC-SWE (G chains x up to 2 attempts per task; a chain
stops at its first success) and one with GRPO for the same steps and tasks, and evaluate both the
same two ways. The budget is counted in executed attempts: GRPO's group per task is set to the
attempts FC-SWE actually executed per task and step in that seed (at least 2), so both arms
spend the same number of verified attempts. Prints mean +- standard deviation over seeds of
Resolved@1, Resolved@2 and conditional recovery, the paper's feedback-vs-resample check (Resolved@2
with the failure context minus Resolved@2 of an independent second sample, before and after each
arm), executed attempts per arm, and the paired bootstrap 95% interval of each arm minus the base
(Resolved@2, pooled over seeds). ``--json`` prints one JSON object as the last line.

    python bench/learning_bench.py --seeds 0,1,2 --steps 4 --eval-tasks 60 [--policy tiny-sft] [--json]

``--train-tasks FILE`` trains on a tasks file instead of the built-in train split, e.g. the RL
frontier that ``swetrain curriculum select`` writes from a mastery map (paper 000: RL on tasks the
base solves sometimes); ``--curriculum N`` instead probes N train tasks with the base and trains on
their frontier, as the quickstart does. ``--eval-on train`` also evaluates on the training tasks.
``--frontier-samples N`` (with ``--curriculum``) scores the RL set before and after each arm with N
single attempts per task under the same fresh seeds -- the quickstart's target (a), the reward
curve's endpoints measured outside training -- and reports each arm's paired interval.

From the SmolLM2 base with the CPU step levers (docs/training.md, "RL step levers"):

    python bench/learning_bench.py --policy smollm2-easy-sft --tier easy --dtype bf16-native \
        --override train.precision=bf16-native --override train.trainable_layers=8 --curriculum 24 --json
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


def _executed_attempts(run_dir: Path) -> int:
    """Verified attempts an RL run executed (the rows of its trajectory store)."""
    from swetrain.rollout.store import TrajectoryStore

    return len(TrajectoryStore(run_dir).read()[0])


def run_seed(seed: int, args: argparse.Namespace, root: Path) -> dict[str, dict[str, float]]:
    from swetrain.eval.evaluate import evaluate_policy
    from swetrain.policy.hf import HFPolicy
    from swetrain.train.config import load_config
    from swetrain.policy.spec import resolve_policy_path
    from swetrain.recipes.tiny.quickstart import frontier_figures, heldout_sample, task_scores
    from swetrain.recipes.tiny.quickstart_settings import QUICKSTART_ROLLOUT, suite_tasks
    from swetrain.train.rl import RLTrainer

    base = resolve_policy_path(args.policy)
    heldout = heldout_sample(args.eval_tasks, 0, tier=args.tier)  # the same held-out tasks for every seed and arm
    suites = {"heldout": heldout} if heldout else {}
    train_tasks = None
    if args.train_tasks:
        from swetrain.tasks.builtin import load_builtin
        from swetrain.tasks.record import load_tasks

        train_tasks = load_tasks(args.train_tasks)
        if any(not t.source for t in train_tasks):  # rows of the built-in suite: materialise their snapshots
            train_tasks = load_builtin(path=args.train_tasks)
    if args.eval_on == "train" and train_tasks is not None:
        suites["train"] = train_tasks
    ro = load_config("fcswe", overrides=list(QUICKSTART_ROLLOUT)).rollout  # the quickstart's sampling settings
    ev = dict(chains=args.eval_chains, attempts=2, seed=1000 + seed,
              max_turns=ro.max_turns, max_new_tokens=ro.max_new_tokens, max_context_tokens=ro.max_context_tokens,
              temperature=ro.temperature, workers=ro.workers)
    out: dict[str, dict[str, float]] = {}
    t0 = time.monotonic()

    def evaluate(policy, name: str) -> None:
        for suite, tasks in suites.items():
            key = name if suite == "heldout" else f"{name}@train"
            fb = evaluate_policy(policy, tasks, root / f"s{seed}-{key}-eval", context_variant="patch+verifier", **ev)
            rs = evaluate_policy(policy, tasks, root / f"s{seed}-{key}-eval-resample", context_variant="none", **ev)
            out[key] = {**fb.headline(), "resample_resolved_at_2": rs.resolved_at_2,
                        "feedback_minus_resample_at_2": fb.resolved_at_2 - rs.resolved_at_2,
                        "per_task_at_2": task_scores(fb, 2)}

    base_policy = HFPolicy(base, dtype=args.dtype)
    evaluate(base_policy, "base")
    if args.curriculum and train_tasks is None:
        import random

        from swetrain.curriculum.mastery import MasteryMap, estimate_mastery
        from swetrain.recipes.tiny.quickstart import select_rl_tasks
        from swetrain.rollout.cli import filter_tier

        probe = filter_tier(suite_tasks("train", None), args.tier)
        random.Random(seed).shuffle(probe)
        probe = probe[: args.curriculum]
        mastery = MasteryMap(policy=str(base))
        estimate_mastery(base_policy, probe, root / f"s{seed}-curriculum", mastery, phase="base", rollouts=2, seed=seed + 777,
                         max_turns=ro.max_turns, max_new_tokens=ro.max_new_tokens, max_context_tokens=ro.max_context_tokens,
                         temperature=ro.temperature, workers=ro.workers)
        train_tasks, record = select_rl_tasks(mastery, probe, args.rl_tasks, seed)
        out["curriculum"] = {"probed": len(probe), "rl_tasks": len(train_tasks), "fallback": float(record["fallback"])}
    frontier_before = None
    frontier_kwargs = dict(chains=args.frontier_samples, attempts=1, context_variant="none", seed=seed + 4242,
                           max_turns=ro.max_turns, max_new_tokens=ro.max_new_tokens,
                           max_context_tokens=ro.max_context_tokens, temperature=ro.temperature, workers=ro.workers)
    if args.frontier_samples and args.curriculum and not args.train_tasks:
        frontier_before = evaluate_policy(base_policy, train_tasks, root / f"s{seed}-frontier-base", **frontier_kwargs)
        out["frontier"] = {"tasks": len(train_tasks), "samples": args.frontier_samples}
    del base_policy
    common = [f"train.steps={args.steps}", f"train.save_every={args.steps}", f"seed={seed}",
              f"rollout.tasks_per_step={args.tasks_per_step}", "logging.progress=false", "logging.tensorboard=false",
              *QUICKSTART_ROLLOUT, f"rollout.hf_dtype={args.dtype}", *args.override]
    budget = 0
    for name in ("fcswe", "grpo"):
        if name == "fcswe":
            cfg = load_config("fcswe", overrides=[*common, f"rollout.group={args.group}"])
        else:  # the attempts FC-SWE executed per task and step, as independent GRPO samples
            per_task = budget / (args.steps * args.tasks_per_step)
            cfg = load_config("grpo", overrides=[*common, f"rollout.group={max(2, round(per_task))}"])
        cfg.policy = str(base)
        run_dir = root / f"s{seed}-{name}"
        trainer = RLTrainer(cfg, run_dir, tasks=train_tasks, policy_path=base)
        trainer.train()
        evaluate(trainer.policy, name)
        if frontier_before is not None:
            after = evaluate_policy(trainer.policy, train_tasks, root / f"s{seed}-frontier-{name}", **frontier_kwargs)
            fig = frontier_figures(frontier_before, after, record, args.frontier_samples, seed)
            out["frontier"].update(base=fig["before"], **{name: fig["after"], f"{name}-base": fig["paired"]})
        out[name]["executed_attempts"] = _executed_attempts(run_dir)
        budget = budget or out[name]["executed_attempts"]
        del trainer
    short = {k: {m: v for m, v in d.items() if m != "per_task_at_2"} for k, d in out.items()}
    print(f"seed {seed}: {json.dumps(short)} ({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--eval-tasks", type=int, default=60)
    ap.add_argument("--eval-chains", type=int, default=1)
    ap.add_argument("--tasks-per-step", type=int, default=2)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--policy", default="tiny-sft")
    ap.add_argument("--out", type=Path, default=None, help="keep run folders here (default: a temp folder)")
    ap.add_argument("--train-tasks", type=Path, default=None, help="train on this tasks file (e.g. the curriculum frontier)")
    ap.add_argument("--curriculum", type=int, default=0, help="probe this many train tasks and train on their frontier")
    ap.add_argument("--rl-tasks", type=int, default=8, help="size of the --curriculum RL set")
    ap.add_argument("--frontier-samples", type=int, default=0,
                    help="with --curriculum: single attempts per RL-set task before and after each arm (fresh seeds)")
    ap.add_argument("--eval-on", choices=["heldout", "train"], default="heldout",
                    help="train: also evaluate on the --train-tasks tasks")
    ap.add_argument("--tier", default=None, help="only tasks of this tier (easy | standard), held-out and probed")
    ap.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16", "bf16-native"],
                    help="weights' dtype of the evaluations and the RL rollouts (rollout.hf_dtype)")
    ap.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                    help="recipe override for both arms, repeatable (e.g. train.trainable_layers=8 train.precision=bf16)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.eval_on == "train" and args.train_tasks is None:
        ap.error("--eval-on train needs --train-tasks FILE")
    if args.frontier_samples < 0:
        ap.error("--frontier-samples must be >= 0")
    if args.frontier_samples and not args.curriculum:
        ap.error("--frontier-samples needs --curriculum N (the RL set is the probed frontier)")
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
    frontier = [r["frontier"] for r in results if "frontier" in r]
    if not arms:
        raise SystemExit("nothing was evaluated")
    from swetrain.eval.metrics import paired_bootstrap

    keys = (*KEYS, "resample_resolved_at_2", "feedback_minus_resample_at_2", "executed_attempts")
    table: dict[str, dict[str, dict[str, float]]] = {}
    for arm in arms:
        table[arm] = {}
        for key in keys:
            vals = [r[arm][key] for r in results if key in r[arm]]
            if vals:
                table[arm][key] = {"mean": statistics.fmean(vals), "std": statistics.pstdev(vals) if len(vals) > 1 else 0.0,
                                   "values": vals}
    paired: dict[str, dict[str, float]] = {}
    for arm in ("grpo", "fcswe"):
        if arm in results[0]:
            ids = [(i, iid) for i, r in enumerate(results) for iid in sorted(r["base"]["per_task_at_2"])]
            ci = paired_bootstrap([results[i][arm]["per_task_at_2"][iid] for i, iid in ids],
                                  [results[i]["base"]["per_task_at_2"][iid] for i, iid in ids])
            paired[f"{arm}-base"] = {"diff": ci.mean_diff, "ci_low": ci.low, "ci_high": ci.high, "n": len(ids)}
    if "grpo" in results[0] and "fcswe" in results[0]:
        ids = [(i, iid) for i, r in enumerate(results) for iid in sorted(r["base"]["per_task_at_2"])]
        ci = paired_bootstrap([results[i]["fcswe"]["per_task_at_2"][iid] for i, iid in ids],
                              [results[i]["grpo"]["per_task_at_2"][iid] for i, iid in ids])
        paired["fcswe-grpo"] = {"diff": ci.mean_diff, "ci_low": ci.low, "ci_high": ci.high, "n": len(ids)}
    print(f"\nheld-out: {args.eval_tasks} tasks x {args.eval_chains} chain(s), {len(seeds)} seeds, "
          f"{args.steps} RL steps x {args.tasks_per_step} tasks, policy {args.policy}")

    def cell(arm: str, key: str) -> str:
        if key not in table[arm]:
            return "-"
        m = table[arm][key]
        return f"{m['mean']:.0f}" if key == "executed_attempts" else f"{100 * m['mean']:6.1f} ± {100 * m['std']:4.1f}%"

    heads = ("Resolved@1", "Resolved@2", "Cond. recovery", "R@2 resample", "feedback-resample", "attempts")
    print(f"{'arm':12s} " + " ".join(f"{h:>17s}" for h in heads))
    for arm in arms:
        print(f"{arm:12s} " + " ".join(f"{cell(arm, k):>17s}" for k in keys))
    for name, p in paired.items():
        print(f"paired Resolved@2 {name}: {100 * p['diff']:+.1f} points [{100 * p['ci_low']:+.1f}, {100 * p['ci_high']:+.1f}] "
              f"over {p['n']} task-seeds")
    for i, f in enumerate(frontier):
        for arm in ("fcswe", "grpo"):
            p = f.get(f"{arm}-base")
            if p and p["diff"] is not None:
                print(f"RL set (seed {seeds[i]}, {p['n_tasks']} tasks x {f['samples']} samples): {arm} "
                      f"{100 * f['base']:.1f}% -> {100 * f[arm]:.1f}%, {100 * p['diff']:+.1f} points "
                      f"[{100 * p['ci_low']:+.1f}, {100 * p['ci_high']:+.1f}] over {p['n_pairs']} pairs")
    if args.json:
        print(json.dumps({"config": {k: str(v) for k, v in vars(args).items()}, "results": table, "paired_at_2": paired,
                          "frontier": frontier,
                          "seconds": round(time.monotonic() - started, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
