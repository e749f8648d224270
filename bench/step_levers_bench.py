"""RL-step levers of a policy update on CPU: float32 vs bf16 autocast, every layer vs the top N.

1. Trajectories: a run directory's stored trajectories (``--data``: a ``swetrain eval``,
   ``rollout``, ``train`` or quickstart run of the policy), the first ``--rows`` of them in
   (task, chain, attempt) order -- about one RL step's worth (2 tasks x 4 chains x up to 2
   attempts is 8-16 rows).
2. Advantages: the verifier's outcomes through the recipe's estimator; with
   ``optim.skip_zero_advantage=false`` every row gets its forward and backward, so the timing is
   that of a step whose groups all have mixed rewards (the expensive case).
3. The same update runs once per lever from the same weights: float32 (baseline), bf16 autocast,
   float32 with only the top ``--top`` decoder blocks trainable (``train.trainable_layers``), and
   both. Prints seconds, trained tokens, tokens/s and the speed-up over the baseline.
4. Agreement: the learner's float32 log-probs of the generated tokens against the behaviour
   log-probs stored with the trajectories (from whatever dtype generated them, e.g. ``swetrain eval
   --dtype bfloat16``): mean and max |difference| and the mean importance ratio. Truncated IS
   corrects a small gap; a large one means the generator's dtype should not be used for RL.

Usage: python bench/step_levers_bench.py --data RUN_DIR [--policy smollm2-easy-sft] [--rows 12]
[--top 8] [--json]
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

LEVERS = (("float32, every layer", "fp32", None), ("bf16 autocast, every layer", "bf16", None),
          ("float32, top {top} blocks", "fp32", "top"), ("bf16 autocast, top {top} blocks", "bf16", "top"))


def step_rows(data: str, rows: int):
    """The first ``rows`` stored trajectories in (task, chain, attempt) order."""
    from swetrain.rollout.store import TrajectoryStore

    trajs = []
    for store in sorted({p.parent.parent for p in Path(data).rglob("trajectories/*.parquet")}):
        trajs += TrajectoryStore(store).read_all()
    if not trajs:
        raise SystemExit(f"--data {data}: no stored trajectories")
    trajs.sort(key=lambda t: (t.instance_id, t.chain, t.attempt))
    return trajs[:rows]


def agreement(model, trajs, temperature: float) -> dict[str, float]:
    """Learner (float32) vs stored behaviour log-probs on the generated tokens."""
    import torch

    from swetrain.policy.hf import sequence_logprobs

    diffs = []
    with torch.no_grad():
        for t in trajs:
            lp = sequence_logprobs(model, [list(t.token_ids)], [1], temperature=temperature)[0]
            for i, m in enumerate(t.assistant_mask):
                if m and i >= 1 and t.behavior_logprobs[i] != 0.0:
                    diffs.append(float(lp[i - 1]) - float(t.behavior_logprobs[i]))
    if not diffs:
        return {"tokens": 0}
    return {"tokens": len(diffs), "mean_abs": sum(abs(d) for d in diffs) / len(diffs),
            "max_abs": max(abs(d) for d in diffs),
            "mean_ratio": sum(math.exp(-d) for d in diffs) / len(diffs)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="run directory with stored trajectories of --policy")
    ap.add_argument("--policy", default="smollm2-easy-sft", help="the model that generated them")
    ap.add_argument("--recipe", default="fcswe", choices=["fcswe", "grpo"])
    ap.add_argument("--rows", type=int, default=12, help="trajectories in the step")
    ap.add_argument("--top", type=int, default=8, help="trainable top decoder blocks of the top-N levers")
    ap.add_argument("--temperature", type=float, default=0.5, help="the sampling temperature of the stored run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from swetrain.policy.spec import resolve_policy_path
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.train.config import load_config
    from swetrain.train.freeze import train_top_layers
    from swetrain.train.update import AttemptRecord, PolicyUpdater, sample_from_trajectory, trajectory_advantages

    threads = configure_torch_threads()
    path = resolve_policy_path(args.policy)
    trajs = step_rows(args.data, args.rows)
    tok = AutoTokenizer.from_pretrained(path)
    base = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    agree = agreement(base, trajs, args.temperature)
    cfg = load_config(args.recipe, overrides=["optim.skip_zero_advantage=false", "optim.lr=1e-6", "optim.warmup_steps=0"])
    records = [AttemptRecord(t.instance_id, t.chain, t.attempt - 1, t.resolved) for t in trajs]
    rewards, adv = trajectory_advantages(records, cfg.algo)
    # a single eval chain gives some tasks no comparison group: give those rows a unit advantage so
    # that every row is trained (the timing is what matters here, not the direction)
    adv = [a if not math.isnan(a) and a != 0.0 else (1.0 if r > 0 else -1.0) for a, r in zip(adv, rewards)]
    samples = [sample_from_trajectory(t, a, r) for t, a, r in zip(trajs, adv, rewards)]
    rows = []
    for label, precision, top in LEVERS:
        model = copy.deepcopy(base)
        trainable = train_top_layers(model, args.top if top else None)
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.optim.lr)
        updater = PolicyUpdater(model, opt, None, cfg.algo, cfg.optim, pad_id=tok.pad_token_id or 0, precision=precision)
        t0 = time.perf_counter()
        m = updater.update(samples, torch.Generator().manual_seed(0))
        seconds = time.perf_counter() - t0
        tokens = sum(len(s.token_ids) for s in samples)
        rows.append({"lever": label.format(top=args.top), "precision": precision, "trainable_layers": args.top if top else None,
                     "trainable_params": trainable, "seconds": round(seconds, 2), "tokens": tokens,
                     "tokens_per_s": round(tokens / seconds, 1), "trainable_tokens": int(m["update/trainable_tokens"])})
        del model, opt, updater
    for r in rows:
        r["speedup"] = round(rows[0]["seconds"] / r["seconds"], 2)
    print(f"policy {args.policy}: {len(trajs)} trajectories, {rows[0]['tokens']} tokens "
          f"({rows[0]['trainable_tokens']} trained), {threads} torch thread(s)")
    print(f"{'lever':<32} {'params':>11} {'seconds':>8} {'tok/s':>7} {'x':>5}")
    for r in rows:
        print(f"{r['lever']:<32} {r['trainable_params']:>11,} {r['seconds']:>8.1f} {r['tokens_per_s']:>7.1f} {r['speedup']:>5.2f}")
    if agree.get("tokens"):
        print(f"behaviour vs float32 learner log-probs over {agree['tokens']} generated tokens: mean |d| "
              f"{agree['mean_abs']:.4f}, max |d| {agree['max_abs']:.3f}, mean ratio {agree['mean_ratio']:.4f}")
    if args.json:
        print(json.dumps({"policy": args.policy, "rows": len(trajs), "threads": threads, "levers": rows, "agreement": agree}))


if __name__ == "__main__":
    main()
