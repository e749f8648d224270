"""Trainer benchmark: the trainer's update throughput against a bare training loop, and where an RL
step's time goes.

1. Update throughput. ``PolicyUpdater.update`` (the trainer's path: old log-probs recomputed,
   micro-batches by padded-token budget, exact gradient accumulation, clipping, AdamW, scheduler)
   runs on stored trajectories with synthetic non-zero advantages, so no row is skipped. A bare loop
   then runs over the same model and the same micro-batches: forward, ``-(A·logp)`` token-mean,
   backward, clip, AdamW. Both count trainable-token forwards+backwards per second. The update is
   exactly on-policy (one epoch, one mini-batch), so the trainer takes its old log-probs from the
   training forward (``optim.on_policy_shortcut``); it is also timed with that shortcut off (one
   extra no-grad forward scoring the old log-probs).
2. RL step split. From a run's ``metrics.jsonl`` (``time/rollout_s``, ``time/update_s``) and its
   trajectories' timings: generation, tools, verifier and diff seconds summed over episodes.
   Episodes run in parallel, so these sums can exceed the rollout wall time.
3. Generators (``--generators hf,vllm``): the same short RL run (``fcswe``, the same tasks, seed and
   sampling settings) once per ``rollout.generator``, and their step splits side by side: engine
   start, rollout, update, weight sync, generation seconds, generated tokens and generation tokens
   per second (tokens / summed ``generate_s``; with several chains in flight that sum includes
   the time a call waits for the model, so tokens per second of rollout wall time is also shown).
   ``--batching off,on`` runs each generator without and with ``rollout.batch_generation``
   (concurrent chains' calls gathered into batched calls). ``vllm`` needs vLLM importable (CPU: the
   ``.venv-vllm`` of ``.ci/vllm``); without it its column says so and the rest still runs.

4. Precision (``--precision``): float32 vs bfloat16 autocast on this machine's CPU (AMX where the
   processor has it), for the tiny policy and a SmolLM2-135M-shaped model (the SmolLM2-135M
   config, random weights: its speed, not its skill), each over the same token batch: forward +
   backward tokens per second, no-grad scoring (prefill) tokens per second, and how far bf16
   token log-probs are from float32 ones (max and mean absolute difference, the check that the
   behaviour policy's and the learner's log-probs agree within tolerance when one side runs bf16).

Usage: python bench/train_bench.py --precision [--tokens 2048] [--repeats 2] [--json]
       python bench/train_bench.py --data RUN_DIR [--policy tiny-sft|PATH] [--repeats 2] [--json]
       python bench/train_bench.py --generators hf,vllm [--batching off,on] [--workers 2] [--group 2]
                                   [--policy tiny-sft] [--steps 2] [--json]
(RUN_DIR: any ``swetrain train`` run, e.g. a ``swetrain experts`` phase's ``run/`` folder)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _samples(run_dir):
    from swetrain.rollout.store import TrajectoryStore
    from swetrain.train.update import sample_from_trajectory

    trajs = TrajectoryStore(run_dir).read_all()
    if not trajs:
        raise SystemExit(f"no trajectories in {run_dir}")
    return [sample_from_trajectory(t, 1.0 if i % 2 == 0 else -1.0, 0.0) for i, t in enumerate(trajs)]


def _model(path):
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)


def trainer_update(path, samples, pad_id, shortcut=True):
    import torch

    from swetrain.train.config import load_config
    from swetrain.train.update import PolicyUpdater, cosine_with_warmup

    cfg = load_config("grpo", overrides=["optim.skip_zero_advantage=false", "algo.runtime_penalty=false",
                                         f"optim.on_policy_shortcut={str(shortcut).lower()}"])
    model = _model(path)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.optim.lr)
    upd = PolicyUpdater(model, opt, cosine_with_warmup(opt, 0, 10, 0.1), cfg.algo, cfg.optim, pad_id=pad_id)
    t0 = time.perf_counter()
    upd.update(samples, torch.Generator().manual_seed(0))
    return time.perf_counter() - t0, cfg.optim.micro_batch_tokens


def bare_update(path, samples, pad_id, micro_batch_tokens):
    import torch

    from swetrain.train.batch import collate, plan_micro_batches, token_logprobs

    model = _model(path)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    n_tok = sum(s.n_trainable for s in samples)
    t0 = time.perf_counter()
    model.train()
    opt.zero_grad(set_to_none=True)
    for micro in plan_micro_batches([len(s.token_ids) for s in samples], micro_batch_tokens):
        b = collate([samples[i] for i in micro], pad_id)
        adv = torch.zeros_like(b.loss_mask, dtype=torch.float32)
        for j, i in enumerate(micro):
            adv[j, : len(samples[i].token_ids)] = float(samples[i].advantage)
        logp = token_logprobs(model, b.input_ids, b.attention_mask, b.loss_mask).float()
        (-(adv * logp * b.loss_mask).sum() / n_tok).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return time.perf_counter() - t0


def step_split(run_dir):
    from swetrain.rollout.store import TrajectoryStore

    rows = [json.loads(x) for x in open(os.path.join(run_dir, "metrics.jsonl")) if x.strip()]
    trajs = TrajectoryStore(run_dir).read_all()
    sums = {}
    for t in trajs:
        for k, v in (t.timings or {}).items():
            sums[k] = sums.get(k, 0.0) + float(v)
    return {
        "steps": len(rows),
        "rollout_s": sum(r.get("time/rollout_s", 0.0) for r in rows),
        "update_s": sum(r.get("time/update_s", 0.0) for r in rows),
        "step_s": sum(r.get("time/step_s", 0.0) for r in rows),
        "episode_sums_s": sums,
    }


GENERATOR_ROLLOUT = (  # the quickstart's sampling settings (tiny-sft imitates ~2,100-token episodes)
    "rollout.max_new_tokens=192", "rollout.max_context_tokens=3072", "rollout.temperature=0.5",
    "logging.progress=false", "logging.tensorboard=false", "train.save_every=1000",
)


def generator_run(generator, path, tasks, out, args, batching=False):
    """One short ``fcswe`` run with ``rollout.generator=generator``; its step split."""
    from swetrain.train.config import load_config
    from swetrain.train.rl import RLTrainer

    overrides = [f"rollout.generator={generator}", f"train.steps={args.steps}", f"seed={args.seed}",
                 f"rollout.tasks_per_step={args.tasks_per_step}", f"rollout.group={args.group}",
                 f"rollout.workers={args.workers}", f"rollout.batch_generation={str(batching).lower()}",
                 *GENERATOR_ROLLOUT]
    if generator == "vllm":  # float32 like the trainer; a KV cache that fits a small machine
        overrides += ["rollout.vllm.dtype=float32", "rollout.vllm.kv_cache_mb=256", "rollout.vllm.max_model_len=4096"]
    t0 = time.perf_counter()
    trainer = RLTrainer(load_config("fcswe", overrides=overrides), out, tasks=tasks, policy_path=path)
    start_s = time.perf_counter() - t0
    trainer.train()
    split = step_split(out)
    rows = [json.loads(x) for x in open(os.path.join(out, "metrics.jsonl")) if x.strip()]
    from swetrain.rollout.store import TrajectoryStore

    trajs = TrajectoryStore(out).read_all()
    tokens = sum(int(t.output_tokens) for t in trajs)
    gen_s = split["episode_sums_s"].get("generate_s", 0.0)
    return {
        "start_s": start_s,
        "rollout_s": split["rollout_s"],
        "update_s": split["update_s"],
        "sync_s": sum(r.get("time/sync_s", 0.0) for r in rows),
        "step_s": split["step_s"],
        "generate_s": gen_s,
        "episodes": len(trajs),
        "output_tokens": tokens,
        "gen_tok_per_s": tokens / gen_s if gen_s else None,
        # concurrent chains: episode sums count time spent waiting for the model too, so the
        # generated tokens per second of rollout wall time is the figure to compare
        "rollout_tok_per_s": tokens / split["rollout_s"] if split["rollout_s"] else None,
        "prompts_per_call": (sum(r.get("rollout/gen_prompts_per_call", 0.0) for r in rows) / len(rows)) if any(
            "rollout/gen_prompts_per_call" in r for r in rows) else 1.0,
        "rollout_s_per_step": [r.get("time/rollout_s", 0.0) for r in rows],
    }


def compare_generators(args, path):
    """Part 3: the step split of each generator (a column each)."""
    import tempfile

    from swetrain.policy.vllm_backend import vllm_available
    from swetrain.tasks.builtin import load_builtin

    tasks = list(load_builtin(split="train"))[: max(args.tasks_per_step * args.steps, 1)]
    out = {}
    with tempfile.TemporaryDirectory(prefix="train-bench-") as tmp:
        for generator in args.generators:
            for batching in args.batching:
                name = generator + ("+batch" if batching else "")
                if generator == "vllm" and not vllm_available():
                    out[name] = {"skipped": "vLLM is not importable here (CPU: the .venv-vllm of bash .ci/vllm)"}
                    continue
                out[name] = generator_run(generator, path, tasks, os.path.join(tmp, name), args, batching)
    return out


def print_generators(res, args):
    rows = [("engine start s", "start_s", "{:.1f}"), ("rollout s", "rollout_s", "{:.1f}"), ("update s", "update_s", "{:.1f}"),
            ("weight sync s", "sync_s", "{:.2f}"), ("step s", "step_s", "{:.1f}"), ("generation s (episodes)", "generate_s", "{:.1f}"),
            ("episodes", "episodes", "{}"), ("generated tokens", "output_tokens", "{}"), ("generation tok/s", "gen_tok_per_s", "{:.0f}"),
            ("tokens / rollout s", "rollout_tok_per_s", "{:.0f}"), ("prompts per policy call", "prompts_per_call", "{:.2f}")]
    names = list(res)
    print(f"generators ({args.steps} fcswe steps x {args.tasks_per_step} task x {args.group} chains, {args.workers} worker(s)):")
    print(f"  {'':26}" + "".join(f"{n:>14}" for n in names))
    for label, key, fmt in rows:
        cells = []
        for n in names:
            v = res[n].get(key)
            cells.append("-" if v is None else fmt.format(v))
        print(f"  {label:26}" + "".join(f"{c:>14}" for c in cells))
    for n in names:
        if "skipped" in res[n]:
            print(f"  {n}: {res[n]['skipped']}")


SMOLLM2_135M = dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                   num_key_value_heads=3, vocab_size=49152, max_position_embeddings=8192, rope_theta=100000.0,
                   tie_word_embeddings=True, rms_norm_eps=1e-5)


def _precision_models(tiny_path):
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    yield "tiny (2.8M)", AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32)
    torch.manual_seed(0)
    yield "SmolLM2-135M-shaped", LlamaForCausalLM(LlamaConfig(**SMOLLM2_135M)).to(torch.float32)


def _token_logprobs(model, ids):
    import torch

    logits = model(input_ids=ids).logits[:, :-1].float()
    return torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)


def precision_bench(tiny_path, tokens: int, repeats: int) -> dict:
    """Part 4: float32 vs bf16 autocast, forward+backward and scoring, and log-prob agreement."""
    import torch

    from swetrain.policy.threads import torch_threads, update_threads

    out = {}
    with torch_threads(update_threads()):
        for name, model in _precision_models(tiny_path):
            vocab = model.config.vocab_size
            seq = min(tokens, 1024)
            ids = torch.randint(0, vocab, (max(1, tokens // seq), seq), generator=torch.Generator().manual_seed(0))
            n = ids.numel()
            row = {"params": sum(p.numel() for p in model.parameters()), "tokens": n}
            logps = {}
            for prec in ("fp32", "bf16"):
                ctx = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if prec == "bf16" else contextlib.nullcontext
                train_s, score_s = [], []
                for _ in range(repeats):
                    model.zero_grad(set_to_none=True)
                    t0 = time.perf_counter()
                    with ctx():
                        loss = -_token_logprobs(model, ids).mean()
                    loss.backward()
                    train_s.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    with torch.no_grad(), ctx():
                        logps[prec] = _token_logprobs(model, ids)
                    score_s.append(time.perf_counter() - t0)
                row[f"{prec}_train_tok_per_s"] = n / min(train_s)
                row[f"{prec}_score_tok_per_s"] = n / min(score_s)
            diff = (logps["bf16"] - logps["fp32"]).abs()
            row["train_speedup"] = row["bf16_train_tok_per_s"] / row["fp32_train_tok_per_s"]
            row["score_speedup"] = row["bf16_score_tok_per_s"] / row["fp32_score_tok_per_s"]
            row["logprob_absdiff_max"] = float(diff.max())
            row["logprob_absdiff_mean"] = float(diff.mean())
            out[name] = row
            del model
    from swetrain.policy.cpu_features import BF16_FLAGS, cpu_flags, native_bf16

    flags = cpu_flags()
    cpu = {"native_bf16": native_bf16(), "bf16_flags": sorted(flags & BF16_FLAGS),
           "avx512f": "avx512f" in flags, "avx2": "avx2" in flags}
    print(f"precision on CPU ({update_threads()} threads), best of {repeats}; native bf16: {cpu['native_bf16']} "
          f"(flags: {', '.join(cpu['bf16_flags']) or 'none'}; avx512f {cpu['avx512f']}, avx2 {cpu['avx2']}):")
    print(f"{'model':22s} {'params':>9s} {'fp32 fwd+bwd':>13s} {'bf16 fwd+bwd':>13s} {'x':>5s} "
          f"{'fp32 score':>11s} {'bf16 score':>11s} {'x':>5s} {'|dlogp| max/mean':>18s}")
    for name, r in out.items():
        print(f"{name:22s} {r['params'] / 1e6:8.1f}M {r['fp32_train_tok_per_s']:10.0f}t/s {r['bf16_train_tok_per_s']:10.0f}t/s "
              f"{r['train_speedup']:5.2f} {r['fp32_score_tok_per_s']:8.0f}t/s {r['bf16_score_tok_per_s']:8.0f}t/s "
              f"{r['score_speedup']:5.2f} {r['logprob_absdiff_max']:8.3f}/{r['logprob_absdiff_mean']:.4f}")
    out["cpu"] = cpu
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="a swetrain train run directory: update throughput + its step split")
    ap.add_argument("--policy", default="tiny-sft")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--generators", help="comma list of rollout.generator values to compare (hf,vllm)")
    ap.add_argument("--steps", type=int, default=2, help="--generators: RL steps per run")
    ap.add_argument("--tasks-per-step", type=int, default=1)
    ap.add_argument("--group", type=int, default=2)
    ap.add_argument("--workers", type=int, default=1, help="--generators: chains in flight (rollout.workers)")
    ap.add_argument("--batching", default="off", help="--generators: comma list of off,on (rollout.batch_generation)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--precision", action="store_true", help="float32 vs bf16 autocast: tiny and a SmolLM2-135M-shaped model")
    ap.add_argument("--tokens", type=int, default=2048, help="--precision: tokens per forward+backward")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not args.data and not args.generators and not args.precision:
        ap.error("give --data RUN_DIR, --generators hf,vllm and/or --precision")
    if args.generators:
        from swetrain.train.config import GENERATORS

        args.generators = [g.strip() for g in args.generators.split(",") if g.strip()]
        bad = [g for g in args.generators if g not in GENERATORS]
        if bad or not args.generators:
            ap.error(f"--generators: unknown generator(s) {bad} (choose from {', '.join(GENERATORS)})")
        modes = {"off": False, "on": True}
        args.batching = [b.strip() for b in args.batching.split(",") if b.strip()]
        if not args.batching or any(b not in modes for b in args.batching):
            ap.error(f"--batching: comma list of off,on (got {args.batching})")
        args.batching = [modes[b] for b in args.batching]
        for name in ("steps", "tasks_per_step", "group", "workers"):
            if getattr(args, name) < 1:
                ap.error(f"--{name.replace('_', '-')}: must be >= 1 (got {getattr(args, name)})")

    from swetrain.policy.spec import parse_policy_spec
    from swetrain.policy.threads import configure_torch_threads

    configure_torch_threads()
    path = parse_policy_spec(args.policy).model_path()
    out = {}
    if args.precision:
        out["precision"] = precision_bench(path, args.tokens, args.repeats)
    if args.data:
        out.update(update_bench(args, path))
    if args.generators:
        out["generators"] = compare_generators(args, path)
        print_generators(out["generators"], args)
    if args.json:
        print(json.dumps(out))


def update_bench(args, path):
    """Parts 1 and 2 on ``--data``."""
    from transformers import AutoTokenizer

    from swetrain.policy.threads import torch_threads, update_threads

    pad = AutoTokenizer.from_pretrained(path).pad_token_id or 0
    samples = _samples(args.data)
    n_tok = sum(s.n_trainable for s in samples)
    n_all = sum(len(s.token_ids) for s in samples)
    trainer_s, scored_s, bare_s = [], [], []
    with torch_threads(update_threads()):
        for _ in range(args.repeats):
            t, mbt = trainer_update(path, samples, pad)
            trainer_s.append(t)
            scored_s.append(trainer_update(path, samples, pad, shortcut=False)[0])
            bare_s.append(bare_update(path, samples, pad, mbt))
    out = {
        "trajectories": len(samples),
        "trainable_tokens": n_tok,
        "tokens": n_all,
        "trainer_s": min(trainer_s),
        "bare_s": min(bare_s),
        "trainer_tok_per_s": n_tok / min(trainer_s),
        "bare_tok_per_s": n_tok / min(bare_s),
        "trainer_vs_bare": min(bare_s) / min(trainer_s),
        "runs_s": {"trainer": trainer_s, "trainer_scored": scored_s, "bare": bare_s},
        "trainer_scored_s": min(scored_s),  # optim.on_policy_shortcut=false: old log-probs scored apart
        "trainer_scored_vs_bare": min(bare_s) / min(scored_s),
        "step_split": step_split(args.data) if os.path.isfile(os.path.join(args.data, "metrics.jsonl")) else None,
    }
    print(f"update of {len(samples)} trajectories ({n_all} tokens, {n_tok} trainable), best of {args.repeats}:")
    print(f"  trainer {out['trainer_s']:.2f} s ({out['trainer_tok_per_s']:.0f} tok/s)   bare loop {out['bare_s']:.2f} s "
          f"({out['bare_tok_per_s']:.0f} tok/s)   trainer/bare throughput {100 * out['trainer_vs_bare']:.0f}%")
    print(f"  without the on-policy shortcut (old log-probs scored in a separate forward): trainer "
          f"{out['trainer_scored_s']:.2f} s, {100 * out['trainer_scored_vs_bare']:.0f}% of the bare loop")
    print("  every run (s): " + "; ".join(f"{k} " + ", ".join(f"{v:.2f}" for v in vs) for k, vs in out["runs_s"].items()))
    if out["step_split"]:
        s = out["step_split"]
        print(f"RL steps: {s['steps']}, rollout {s['rollout_s']:.1f} s, update {s['update_s']:.1f} s, step {s['step_s']:.1f} s;"
              " episode sums: " + ", ".join(f"{k} {v:.1f}" for k, v in s["episode_sums_s"].items()))
    return out


if __name__ == "__main__":
    main()
