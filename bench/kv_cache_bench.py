"""Decode step of a local model: transformers' DynamicCache (a ``torch.cat`` of the whole cache per
step) vs swetrain's GrowingLayer (appends into spare room, ``swetrain.policy.kv_growth``).

For each batch size, the same left-padded batch (a quarter of the rows carry ``--pad`` leading
padding columns, as a continuous batch does) is prefilled to ``--context`` tokens, then
``--steps`` greedy decode steps run once on the plain cache (the baseline) and once on the
growing one, in the same process. Prints the mean time of a decode step, the speed-up, and the
largest |logit difference| between the two runs (0 when the caches hold the same states).

Usage: python bench/kv_cache_bench.py [--policy smollm2-easy-sft] [--dtype bf16-native]
[--batches 1,8,16] [--context 2500] [--steps 30] [--threads 1] [--json]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import time

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def decode(policy, cache, mask, positions, last, steps: int):
    """``steps`` greedy decode steps; returns (seconds per step, stacked float32 logits)."""
    import torch

    from swetrain.policy.hf import kv_cache_of

    logits = []
    start = time.perf_counter()
    for _ in range(steps):
        mask = torch.cat([mask, mask.new_ones((mask.shape[0], 1))], dim=1)
        positions = positions + 1
        out = policy.model(input_ids=last, attention_mask=mask, position_ids=positions, use_cache=True,
                           **{policy.cache_arg: cache})
        cache = kv_cache_of(out)
        logits.append(out.logits[:, -1, :].float())
        last = logits[-1].argmax(dim=-1, keepdim=True)
    return (time.perf_counter() - start) / steps, torch.stack(logits)


def measure(policy, batch: int, context: int, pad: int, steps: int) -> dict:
    import torch

    from swetrain.policy.hf import kv_cache_of
    from swetrain.policy.kv_growth import grow_in_place

    generator = torch.Generator().manual_seed(batch)
    ids = torch.randint(min(100, policy.vocab_size // 10), min(20000, policy.vocab_size), (batch, context), generator=generator)
    mask = torch.ones((batch, context), dtype=torch.long)
    mask[: max(1, batch // 4), :pad] = 0
    positions = (mask.cumsum(dim=-1) - 1).clamp(min=0)
    with torch.inference_mode():
        out = policy.forward_prompt(ids, mask, positions)
        plain = kv_cache_of(out)
        grown = grow_in_place(copy.deepcopy(plain))
        last = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
        base_s, base_logits = decode(policy, plain, mask, positions[:, -1:], last, steps)
        grow_s, grow_logits = decode(policy, grown, mask, positions[:, -1:], last, steps)
    return {"batch": batch, "context": context, "dynamic_cache_ms": base_s * 1000, "growing_ms": grow_s * 1000,
            "speedup": base_s / grow_s, "max_abs_logit_diff": float((base_logits - grow_logits).abs().max())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--policy", default="smollm2-easy-sft")
    # bf16-native: bfloat16 where the CPU computes it (AMX, AVX-512 BF16), float32 elsewhere
    parser.add_argument("--dtype", default="bf16-native", choices=["float32", "bfloat16", "bf16-native"])
    parser.add_argument("--batches", default="1,8,16")
    parser.add_argument("--context", type=int, default=2500)
    parser.add_argument("--pad", type=int, default=300, help="leading padding columns of a quarter of the rows")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",") if b.strip()]
    if not batches or min(batches) < 1 or args.context < 2 or not 0 <= args.pad < args.context or args.steps < 1:
        raise SystemExit("--batches must be positive integers, --context >= 2, 0 <= --pad < --context, --steps >= 1")

    import torch

    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.spec import resolve_policy_path

    torch.set_num_threads(args.threads)
    policy = HFPolicy(resolve_policy_path(args.policy), device="cpu", dtype=args.dtype)
    rows = [measure(policy, b, args.context, args.pad, args.steps) for b in batches]
    print(f"{args.policy}, {str(policy.dtype).removeprefix('torch.')}, {args.threads} thread(s), context {args.context}, {args.steps} decode steps")
    print("| batch | DynamicCache (cat), ms/step | GrowingLayer, ms/step | speed-up | max |logit diff| |")
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['batch']} | {r['dynamic_cache_ms']:.1f} | {r['growing_ms']:.1f} | {r['speedup']:.2f}x | "
              f"{r['max_abs_logit_diff']:.2g} |")
    if args.json:
        print(json.dumps({"policy": args.policy, "dtype": str(policy.dtype).removeprefix("torch."), "threads": args.threads, "rows": rows}))


if __name__ == "__main__":
    main()
