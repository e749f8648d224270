"""Prefix-cache benchmark: time of the generate calls of real agent episodes, KV reuse on vs off.

1. Runs ``--episodes`` real agent episodes (held-out built-in tasks, quickstart sampling settings:
   temperature 0.5, 192 new tokens per turn, 3,072-token context, 8 turns) with the policy.
2. Replays exactly those generate calls (each turn's prompt and seed, recovered from the stored
   token ids) twice on fresh copies of the policy: once with ``prefix_cache_tokens=0`` (the
   baseline: every turn re-encodes the whole conversation) and once with the prefix cache.
   Episodes are replayed one after another, G attempts of a task in a row as the trainer runs them.

Prints a table (seconds, prompt tokens encoded, generated tokens/s, speed-up) and checks the two
replays generated the same tokens.

Usage: python bench/prefix_cache_bench.py [--policy tiny-sft|PATH] [--episodes 6] [--group 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

LIMITS = dict(max_turns=8, max_tokens_per_call=192, max_context_tokens=3072)
TEMPERATURE = 0.5


def collect(policy, tasks, group: int, seed: int) -> list[list[tuple[list[int], int, int]]]:
    """Per episode: the (prompt ids, turn seed, budget) of each generate call."""
    from swetrain.agent.loop import EpisodeLimits, run_episode, turn_seed
    from swetrain.env.workspace import Workspace
    from swetrain.policy.base import GenerationConfig

    limits = EpisodeLimits(**LIMITS)
    cfg = GenerationConfig(max_new_tokens=LIMITS["max_tokens_per_call"], temperature=TEMPERATURE)
    episodes = []
    for i, task in enumerate(tasks):
        with Workspace.create(task) as ws:
            for g in range(group):
                ws.reset()
                ep_seed = seed + 1000 * i + g
                traj = run_episode(task, ws, policy, None, limits, gen_config=cfg, seed=ep_seed)
                calls = []
                for k in range(1, traj.num_turns + 1):
                    start = traj.segment_ids.index(k)
                    room = LIMITS["max_context_tokens"] - start
                    calls.append((traj.token_ids[:start], turn_seed(ep_seed, k - 1), min(LIMITS["max_tokens_per_call"], room)))
                episodes.append(calls)
    return episodes


def replay(path, episodes, cache_tokens: int, stops: list[int]) -> dict:
    from swetrain.policy.base import GenerationConfig
    from swetrain.policy.hf import HFPolicy

    policy = HFPolicy(path, device="cpu", dtype="float32", prefix_cache_tokens=cache_tokens)
    generated, prompt_tokens, outputs = 0, 0, []
    t0 = time.perf_counter()
    for calls in episodes:
        for prompt, seed, budget in calls:
            cfg = GenerationConfig(max_new_tokens=budget, temperature=TEMPERATURE, stop_token_ids=stops, seed=seed)
            gen = policy.generate([prompt], cfg)[0]
            generated += len(gen.token_ids)
            prompt_tokens += len(prompt)
            outputs.append(list(gen.token_ids))
    seconds = time.perf_counter() - t0
    reused = policy.prefix_cache.reused_tokens
    return {"seconds": seconds, "prompt_tokens": prompt_tokens, "encoded_tokens": prompt_tokens - reused,
            "generated": generated, "tokens_per_s": generated / seconds, "outputs": outputs,
            "hits": policy.prefix_cache.hits}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default="tiny-sft", help="tiny-sft (shipped), or a transformers model folder")
    ap.add_argument("--episodes", type=int, default=6, help="tasks (each run --group times)")
    ap.add_argument("--group", type=int, default=2, help="attempts per task, replayed in a row")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from swetrain.agent.loop import chat_format_for
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.tasks.builtin import load_builtin
    from swetrain.recipes.tiny.warmstart import SHIPPED_TINY

    configure_torch_threads()
    path = SHIPPED_TINY if args.policy == "tiny-sft" else args.policy
    tasks = load_builtin(split="heldout")[: args.episodes]
    policy = HFPolicy(path, device="cpu", dtype="float32")
    t0 = time.perf_counter()
    episodes = collect(policy, tasks, args.group, args.seed)
    collect_s = time.perf_counter() - t0
    stops = list(chat_format_for(policy).stop_token_ids)
    base = replay(path, episodes, 0, stops)
    cached = replay(path, episodes, 32768, stops)
    same = base["outputs"] == cached["outputs"]
    turns = sum(len(c) for c in episodes)
    rows = [("full prefill (baseline)", base), ("prefix cache", cached)]
    print(f"policy {args.policy}: {len(episodes)} episodes, {turns} generate calls (collected in {collect_s:.0f} s)")
    print(f"{'mode':<26}{'seconds':>9}{'prompt tok':>12}{'encoded tok':>13}{'gen tok/s':>11}")
    for name, r in rows:
        print(f"{name:<26}{r['seconds']:>9.1f}{r['prompt_tokens']:>12}{r['encoded_tokens']:>13}{r['tokens_per_s']:>11.1f}")
    speedup = base["seconds"] / cached["seconds"]
    print(f"speed-up {speedup:.2f}x; same tokens: {same}")
    figures = {
        "policy": str(args.policy), "episodes": len(episodes), "generate_calls": turns,
        "baseline_s": base["seconds"], "cached_s": cached["seconds"], "speedup": speedup,
        "baseline_encoded_tokens": base["encoded_tokens"], "cached_encoded_tokens": cached["encoded_tokens"],
        "baseline_tokens_per_s": base["tokens_per_s"], "cached_tokens_per_s": cached["tokens_per_s"],
        "cache_hits": cached["hits"], "same_tokens": same,
    }
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
