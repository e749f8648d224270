"""Rollout benchmark: agent-loop overhead, engine throughput, tiny-model tokens/s in the loop.

1. Tool-call overhead per step: an agent step (scripted zero-cost policy -> parse -> tool call ->
   observation ids) vs the raw sandboxed subprocess call it wraps (``Workspace.run``), same command.
   Target: <= 10% overhead.
2. Throughput: chains/s with 1 vs 2 workers, local (threads) and Ray (actors), on the demo task;
   each chain views the file, fixes it, finishes, and is verified (pytest in the sandbox).
3. Tiny model (random weights): generated tokens/s inside run_episode vs the same ``generate``
   calls (same prompts, same seeds) made directly.

Usage: python bench/rollout_bench.py [--quick] [--skip-ray] [--json]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def bench_overhead(task, tokenizer_path: str, steps: int, repeats: int) -> dict:
    from swetrain.agent.loop import EpisodeLimits, run_episode
    from swetrain.agent.scripted import TurnScript, bash_call, make_scripted
    from swetrain.env.workspace import Workspace

    cmd = "echo step"
    policy = make_scripted(TurnScript([bash_call(cmd)] * steps), tokenizer_path)
    limits = EpisodeLimits(max_turns=steps + 1, max_context_tokens=1 << 20)
    raw, agent = [], []
    with Workspace.create(task) as ws:
        for _ in range(2):  # warm up both paths
            ws.run(cmd)
        run_episode(task, ws, policy, None, EpisodeLimits(max_turns=2))
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(steps):
                ws.run(cmd)
            raw.append((time.perf_counter() - t0) / steps)
            traj = run_episode(task, ws, policy, None, limits)
            loop_s = traj.timings["total_s"] - traj.timings["diff_s"]
            agent.append(loop_s / traj.num_turns)
    raw_s, agent_s = statistics.median(raw), statistics.median(agent)
    return {
        "raw_call_ms": 1000 * raw_s,
        "agent_step_ms": 1000 * agent_s,
        "overhead_pct": 100 * (agent_s - raw_s) / raw_s,
        "steps": steps,
        "isolated": ws.isolated,
    }


def bench_throughput(task, tokenizer_path: str, chains: int, backends: list[str]) -> dict:
    from swetrain.agent.loop import EpisodeLimits
    from swetrain.agent.scripted import TurnScript, _call, make_scripted, replace_call
    from swetrain.rollout.engine import ChainJobConfig, RolloutEngine

    script = TurnScript(
        [
            _call("file_editor", {"command": "view", "path": "calc/__init__.py"}),
            replace_call("calc/__init__.py", "return a + b  # bug: should multiply", "return a * b"),
        ]
    )
    factory = functools.partial(make_scripted, script, tokenizer_path)
    out = {}
    for backend in backends:
        for workers in (1, 2):
            cfg = ChainJobConfig(group=chains, attempts=1, limits=EpisodeLimits(max_turns=4), seed=0, verify_timeout_s=120)
            engine = RolloutEngine(policy_factory=factory, backend=backend, workers=workers, config=cfg)
            with tempfile.TemporaryDirectory() as run_dir:
                t0 = time.perf_counter()
                report = engine.run([task], run_dir)
                wall = time.perf_counter() - t0
            if report.chains_done != chains:
                raise RuntimeError(f"{backend}/{workers}: only {report.chains_done}/{chains} chains done: {report.skipped_tasks}")
            busy = wall - report.backend_start_s  # excludes starting Ray / building policies
            out[f"{backend}_w{workers}_chains_per_s"] = chains / busy
            out[f"{backend}_w{workers}_start_s"] = report.backend_start_s
    return out


def bench_tiny(task, turns: int, max_new: int) -> dict:
    from swetrain.agent.loop import EpisodeLimits, chat_format_for, run_episode, turn_seed
    from swetrain.env.workspace import Workspace
    from swetrain.policy.base import GenerationConfig
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.tiny import ensure_tiny

    policy = HFPolicy(ensure_tiny(), device="cpu", dtype="float32")
    limits = EpisodeLimits(max_turns=turns, max_tokens_per_call=max_new)
    seed = 3
    with Workspace.create(task) as ws:
        run_episode(task, ws, policy, None, EpisodeLimits(max_turns=1, max_tokens_per_call=8), seed=seed)  # warm-up
        ws.reset()
        t0 = time.perf_counter()
        traj = run_episode(task, ws, policy, None, limits, seed=seed)
        loop_s = time.perf_counter() - t0
    # the same generate calls, outside the loop: each turn's prompt is the prefix before its ids
    starts = [traj.segment_ids.index(k) for k in range(1, traj.num_turns + 1)]
    stops = list(chat_format_for(policy).stop_token_ids)
    bare_tokens = 0
    t0 = time.perf_counter()
    for k, start in enumerate(starts):
        cfg = GenerationConfig(max_new_tokens=max_new, stop_token_ids=stops, seed=turn_seed(seed, k))
        gen = policy.generate([traj.token_ids[:start]], cfg)[0]
        bare_tokens += len(gen.token_ids)
    bare_s = time.perf_counter() - t0
    return {
        "tiny_loop_tokens_per_s": traj.output_tokens / loop_s,
        "tiny_bare_tokens_per_s": bare_tokens / bare_s,
        "tiny_loop_vs_bare_pct": 100 * (traj.output_tokens / loop_s) / (bare_tokens / bare_s),
        "tiny_tokens": traj.output_tokens,
        "tiny_same_tokens": bare_tokens == traj.output_tokens,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (CI smoke)")
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--json", action="store_true", help="print one JSON object of the figures as the last line")
    args = parser.parse_args()

    from swetrain.env.demo import build_demo_task
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.policy.tiny import ensure_tiny

    configure_torch_threads()
    tok_path = str(ensure_tiny())
    with tempfile.TemporaryDirectory() as tmp:
        task = build_demo_task(Path(tmp))
        figures: dict = {}
        figures.update(bench_overhead(task, tok_path, steps=10 if args.quick else 30, repeats=3 if args.quick else 5))
        backends = ["local"] + ([] if args.skip_ray else ["ray"])
        figures.update(bench_throughput(task, tok_path, chains=4 if args.quick else 8, backends=backends))
        figures.update(bench_tiny(task, turns=2 if args.quick else 4, max_new=32 if args.quick else 64))

    rows = [
        ("tool step, raw Workspace.run (baseline)", f"{figures['raw_call_ms']:.1f} ms", ""),
        ("tool step, inside the agent loop", f"{figures['agent_step_ms']:.1f} ms", f"{figures['overhead_pct']:+.1f}% (target <= 10%)"),
    ]
    for backend in backends:
        w1, w2 = figures[f"{backend}_w1_chains_per_s"], figures[f"{backend}_w2_chains_per_s"]
        rows.append((f"{backend}: chains/s, 1 worker (baseline)", f"{w1:.3f}", ""))
        rows.append((f"{backend}: chains/s, 2 workers", f"{w2:.3f}", f"x{w2 / w1:.2f}"))
        rows.append((f"{backend}: start-up (2 workers, not counted above)", f"{figures[f'{backend}_w2_start_s']:.1f} s", ""))
    rows.append(("tiny: tokens/s, bare generate (baseline)", f"{figures['tiny_bare_tokens_per_s']:.1f}", ""))
    rows.append(("tiny: tokens/s, in the agent loop", f"{figures['tiny_loop_tokens_per_s']:.1f}", f"{figures['tiny_loop_vs_bare_pct']:.0f}% of bare"))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>12}  vs baseline")
    for name, value, rel in rows:
        print(f"{name:<{width}}  {value:>12}  {rel}")
    if args.json:
        print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
