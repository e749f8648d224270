"""Copy-skill benchmark (not a CI test): can a base policy copy from its context?

For each policy spec, :func:`swetrain.recipes.tiny.copy_skill.copy_skill`: induction accuracy (second
occurrence of a random span after a random gap) and the greedy final turn of 30 unseen edit drills
(valid call, exact path, exact old_str, exact new_str). The first policy is the baseline column.
``--pretrain-steps N`` adds two arms with the same copy-pretraining budget
(:mod:`swetrain.recipes.tiny.copy_pretrain`: an easy phase of at most ``--easy-steps`` steps on a 500-id
range until the circuit forms, then N steps on the whole vocabulary and real code): the untrained
tiny model trained at its full depth of 4 layers (the baseline), and trained at 2 layers and then
grown back to 4 with identity layers (the recipe of the ``tiny`` warm start). ``--json`` prints one JSON object as the last line.

    python bench/copy_bench.py [--policies tiny,tiny-sft] [--pretrain-steps 1500] [--easy-steps 4000] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policies", default="tiny,tiny-sft", help="comma-separated policy specs or model folders")
    ap.add_argument("--drills", type=int, default=30)
    ap.add_argument("--pretrain-steps", type=int, default=0)
    ap.add_argument("--easy-steps", type=int, default=4000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from rich.console import Console
    from rich.table import Table
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from swetrain.recipes.tiny.copy_skill import copy_skill
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.policy.spec import resolve_policy_path

    configure_torch_threads()
    rows: dict[str, dict[str, float]] = {}
    for spec in [s for s in args.policies.split(",") if s]:
        path = resolve_policy_path(spec)
        t0 = time.monotonic()
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
        rows[spec] = {**copy_skill(model, AutoTokenizer.from_pretrained(path), drills=args.drills),
                      "seconds": round(time.monotonic() - t0, 1)}
    if args.pretrain_steps:
        from swetrain.recipes.tiny.copy_pretrain import CopyPretrainConfig, code_corpus, copy_pretrained

        path = resolve_policy_path("tiny")
        tok = AutoTokenizer.from_pretrained(path)
        code = code_corpus(tok)
        for start_layers in (4, 2):
            t0 = time.monotonic()
            model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
            cfg = CopyPretrainConfig(steps=args.pretrain_steps, easy_steps=args.easy_steps, start_layers=start_layers)
            _, stats = copy_pretrained(model, cfg, code)
            arm = f"tiny + copy pretraining at {start_layers} layers" + (" (grown to 4)" if start_layers < 4 else "")
            rows[arm] = {**copy_skill(model, tok, drills=args.drills), "easy_steps": stats["easy_steps"],
                         "copy_loss": round(stats["loss"], 3), "seconds": round(time.monotonic() - t0, 1)}
    keys = [k for k in next(iter(rows.values())) if k != "seconds"]
    base = next(iter(rows))
    table = Table(title=f"copy skill (baseline: {base})")
    table.add_column("policy")
    for k in keys:
        table.add_column(k, justify="right")
    table.add_column("s", justify="right")
    for spec, r in rows.items():
        table.add_row(spec, *[f"{r[k]:.3f}" if k in r else "-" for k in keys], f"{r['seconds']:.0f}")
    Console(file=sys.stderr if args.json else sys.stdout).print(table)
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
