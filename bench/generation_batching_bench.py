"""Generation batching benchmark: tokens/s of concurrent chains with and without ``BatchingPolicy``.

Each "chain" is a thread that runs the rollout engine's generation pattern without tools: a real
agent prompt (the prompts of a stored run's trajectories), then ``--turns`` generate calls of one
prompt each (the conversation so far, the quickstart's sampling settings, a seed per turn), with
an observation of ``--obs-tokens`` real tokens appended after each turn. ``N`` chains run at once
through a ``LockedPolicy`` (what the engine uses without batching: one call at a time) or a
``BatchingPolicy`` (``rollout.batch_generation``). Conditions are interleaved over ``--repeats``
rounds (the machine's load drifts), after one short warm-up call per backend, and the figure is
generated tokens per second of wall time, best round. The same seeds give the same tokens in both modes (checked for ``hf``).

Usage: python bench/generation_batching_bench.py --data RUN_DIR [--policy tiny-sft] [--backends hf,vllm]
           [--chains 1,2,4] [--turns 3] [--repeats 2] [--json]
(vllm: only where vLLM is importable, e.g. the .venv-vllm of bash .ci/vllm)
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def conversations(run_dir, n, obs_tokens):
    """``n`` (prompt, observation) pairs from a run's trajectories (cycled when it has fewer)."""
    from swetrain.rollout.store import TrajectoryStore

    trajs = TrajectoryStore(run_dir).read_all()
    if not trajs:
        raise SystemExit(f"no trajectories in {run_dir}")
    out = []
    for i in range(n):
        t = trajs[i % len(trajs)]
        prompt = list(t.token_ids[: t.prompt_len])
        tail = [tok for tok, m in zip(t.token_ids[t.prompt_len :], t.assistant_mask[t.prompt_len :]) if not m]
        out.append((prompt, (tail or prompt)[:obs_tokens]))
    return out


def run_chains(policy, convs, turns, base_cfg, seed):
    """All chains at once; returns (generated tokens, wall seconds, token ids per chain)."""
    from dataclasses import replace

    results = [None] * len(convs)
    barrier = threading.Barrier(len(convs))

    def chain(c):
        ids, obs = list(convs[c][0]), convs[c][1]
        made = []
        barrier.wait()
        for turn in range(turns):
            [gen] = policy.generate([ids], replace(base_cfg, seed=seed + 1000 * c + turn))
            made.append(gen.token_ids)
            ids += gen.token_ids + obs
        results[c] = made

    threads = [threading.Thread(target=chain, args=(c,)) for c in range(len(convs))]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return sum(len(x) for r in results for x in r), wall, results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="a run directory with trajectories (their prompts are used)")
    ap.add_argument("--policy", default="tiny-sft")
    ap.add_argument("--backends", default="hf,vllm")
    ap.add_argument("--chains", default="1,2,4")
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--obs-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--wait-ms", type=float, default=5.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from swetrain.policy.base import GenerationConfig
    from swetrain.policy.spec import parse_policy_spec
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.policy.wrappers import BatchingPolicy, LockedPolicy

    configure_torch_threads()
    path = parse_policy_spec(args.policy).model_path()
    chain_counts = [int(x) for x in args.chains.split(",")]
    convs = conversations(args.data, max(chain_counts), args.obs_tokens)
    policies = {}
    for name in [b.strip() for b in args.backends.split(",") if b.strip()]:
        if name == "hf":
            from swetrain.policy.hf import HFPolicy

            policies[name] = HFPolicy(path, device="cpu", dtype="float32")
        elif name == "vllm":
            from swetrain.policy.vllm_backend import VLLMPolicy, vllm_available

            if not vllm_available():
                print("vllm: not importable here, skipped")
                continue
            policies[name] = VLLMPolicy(path, dtype="float32", kv_cache_memory_bytes=256 << 20, max_model_len=4096)
        else:
            ap.error(f"--backends: unknown backend {name!r}")
    eos = sorted(getattr(next(iter(policies.values())), "eos_ids", []) or [])
    base = GenerationConfig(max_new_tokens=args.max_new_tokens, temperature=0.5, stop_token_ids=eos)
    conditions = [(b, n, batch) for b in policies for n in chain_counts for batch in ((False,) if n == 1 else (False, True))]
    for inner in policies.values():  # warm up (allocator, engine graphs): one short call each
        inner.generate([convs[0][0]], GenerationConfig(max_new_tokens=4, seed=0))
    best: dict = {}
    tokens_of: dict = {}
    for rnd in range(1, args.repeats + 1):
        for backend, n, batch in conditions:
            inner = policies[backend]
            if hasattr(inner, "prefix_cache"):
                inner.prefix_cache.clear()
            wrapped = BatchingPolicy(inner, max_batch=n, max_wait_s=args.wait_ms / 1000) if batch else (
                LockedPolicy(inner) if n > 1 else inner)
            toks, wall, ids = run_chains(wrapped, convs[:n], args.turns, base, seed=17)
            key = f"{backend} x{n}" + (" batched" if batch else "")
            tokens_of[key] = ids
            rate = toks / wall
            entry = best.setdefault(key, {"tok_per_s": 0.0, "rounds": []})
            entry["rounds"].append(round(rate, 1))
            if rate > entry["tok_per_s"]:
                entry.update(tok_per_s=rate, tokens=toks, wall_s=wall)
                if batch:
                    entry["prompts_per_call"] = wrapped.stats["prompts"] / max(wrapped.stats["batches"], 1)
    same = {}
    for key in tokens_of:
        if key.endswith(" batched"):
            same[key] = tokens_of[key] == tokens_of[key.removesuffix(" batched")]
    print(f"generation, {args.turns} turns x up to {args.max_new_tokens} tokens per chain, temperature 0.5, "
          f"best of {args.repeats} interleaved rounds (tok/s of wall time):")
    for key, e in best.items():
        extra = f", {e['prompts_per_call']:.2f} prompts/call" if "prompts_per_call" in e else ""
        tag = f", same tokens as unbatched: {same[key]}" if key in same else ""
        print(f"  {key:18} {e['tok_per_s']:7.1f} tok/s ({e['tokens']} tokens, {e['wall_s']:.1f} s{extra}; rounds {e['rounds']}){tag}")
    if args.json:
        print(json.dumps({"results": best, "same_tokens": same}))


if __name__ == "__main__":
    main()
