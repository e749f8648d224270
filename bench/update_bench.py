"""Update benchmark: one RL step's policy update with zero-advantage rows skipped vs run.

Every registered policy loss is linear in the token advantage, so a trajectory whose token
advantages are all 0 (a task whose attempts all failed, under GRPO / FC-SWE's active set, with no
invalid message) adds nothing to the gradient; it only counts in the loss normaliser.
``optim.skip_zero_advantage`` (on by default) keeps it there and runs no forward/backward on it.
Early SWE RL is mostly such groups.

1. Trajectories: a run directory's stored trajectories (``--data``: a quickstart, ``swetrain
   train`` or ``rollout`` run), else a fresh real rollout of ``--policy`` on 2 held-out tasks
   (G=4 chains x R=2 attempts, the quickstart's settings).
2. Rewards: the verifier's outcomes; ``--successes K`` instead marks chain 0's first attempt of
   the first K tasks as resolved (a synthetic label: the bench measures the update's cost for a
   reward pattern, not the policy's quality).
3. The same FC-SWE update (``--recipe``) runs twice from the same weights and optimizer state:
   skipping off (baseline) and on. Prints seconds, rows trained and the largest parameter
   difference between the two results (the skip must not change the update).

Usage: python bench/update_bench.py [--policy tiny-sft|PATH] [--data RUN_DIR] [--successes 1] [--json]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import time

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def fresh_trajectories(path, out_dir):
    from swetrain.agent.loop import EpisodeLimits
    from swetrain.policy.hf import HFPolicy
    from swetrain.rollout.engine import ChainJobConfig, RolloutEngine
    from swetrain.rollout.store import TrajectoryStore
    from swetrain.tasks.builtin import load_builtin

    tasks = sorted(load_builtin("heldout"), key=lambda t: t.instance_id)[:2]
    engine = RolloutEngine(HFPolicy(path), None, backend="local", workers=1, config=ChainJobConfig(
        group=4, attempts=2, limits=EpisodeLimits(max_turns=8, max_context_tokens=3072, max_tokens_per_call=192),
        seed=0, temperature=0.5))
    engine.run(tasks, TrajectoryStore(out_dir), resume=False)
    return TrajectoryStore(out_dir).read_all()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--policy", default="tiny-sft", help="model updated: tiny-sft | smollm2-sft | a model folder")
    ap.add_argument("--data", default=None, help="run directory with trajectories/ (default: a fresh rollout)")
    ap.add_argument("--recipe", default="fcswe", choices=["fcswe", "grpo"])
    ap.add_argument("--successes", type=int, default=-1, help="synthetic: resolve chain 0 attempt 1 of the first K tasks")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    import tempfile

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from swetrain.policy.threads import configure_torch_threads
    from swetrain.rollout.store import TrajectoryStore
    from swetrain.train.config import load_config
    from swetrain.policy.spec import resolve_policy_path
    from swetrain.train.update import AttemptRecord, PolicyUpdater, sample_from_trajectory, trajectory_advantages

    configure_torch_threads()
    path = resolve_policy_path(args.policy)
    if args.data:
        trajs = TrajectoryStore(args.data).read_all()
    else:
        trajs = fresh_trajectories(path, tempfile.mkdtemp(prefix="update-bench-"))
    if not trajs:
        raise SystemExit(f"no trajectories in {args.data}")
    if args.successes >= 0:
        first = sorted({t.instance_id for t in trajs})[: args.successes]
        for t in trajs:
            t.resolved = t.instance_id in first and t.chain == 0 and t.attempt == 1
    # keep what an FC-SWE step would have executed: attempt 2 only after a failed attempt 1
    failed_first = {(t.instance_id, t.chain) for t in trajs if t.attempt == 1 and not t.resolved}
    trajs = [t for t in trajs if t.attempt == 1 or (t.instance_id, t.chain) in failed_first]

    tok = AutoTokenizer.from_pretrained(path)
    base = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    rows = []
    params = {}
    for skip in (False, True):
        cfg = load_config(args.recipe, overrides=[f"optim.skip_zero_advantage={str(skip).lower()}",
                                                  "optim.lr=1e-5", "optim.warmup_steps=0"])
        records = [AttemptRecord(t.instance_id, t.chain, t.attempt - 1, t.resolved) for t in trajs]
        rewards, adv = trajectory_advantages(records, cfg.algo)
        samples = [sample_from_trajectory(t, a, r) for t, a, r in zip(trajs, adv, rewards)]
        model = copy.deepcopy(base)
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay)
        updater = PolicyUpdater(model, opt, None, cfg.algo, cfg.optim, pad_id=tok.pad_token_id or 0)
        t0 = time.perf_counter()
        m = updater.update(samples, torch.Generator().manual_seed(0))
        seconds = time.perf_counter() - t0
        params[skip] = torch.cat([p.detach().flatten() for p in model.parameters()])
        trained = m["update/trajectories"] - m.get("update/zero_adv_skipped", 0.0)
        rows.append({"skip_zero_advantage": skip, "seconds": round(seconds, 2), "rows": int(m["update/trajectories"]),
                     "rows_trained": int(trained), "tokens": int(m["update/trainable_tokens"])})
    diff = float((params[True] - params[False]).abs().max())
    speedup = rows[0]["seconds"] / max(rows[1]["seconds"], 1e-9)
    print(f"policy {args.policy}, recipe {args.recipe}, {len(trajs)} trajectories, "
          f"{sum(t.resolved for t in trajs)} resolved")
    print(f"{'skip':>5} {'seconds':>8} {'rows':>5} {'trained':>8} {'tokens':>7}")
    for r in rows:
        print(f"{str(r['skip_zero_advantage']):>5} {r['seconds']:>8.2f} {r['rows']:>5} {r['rows_trained']:>8} {r['tokens']:>7}")
    print(f"speed-up {speedup:.2f}x; max |param difference| {diff:.2e}")
    if args.json:
        print(json.dumps({"policy": args.policy, "recipe": args.recipe, "trajectories": len(trajs),
                          "baseline_s": rows[0]["seconds"], "skip_s": rows[1]["seconds"], "speedup": round(speedup, 3),
                          "rows_trained": rows[1]["rows_trained"], "max_param_diff": diff}))


if __name__ == "__main__":
    main()
