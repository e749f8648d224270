"""Copy-skill benchmark (not a CI test): can a base policy copy from its context?

For each policy spec, :func:`swetrain.eval.copy_skill.copy_skill`: induction accuracy (second
occurrence of a random span after a random gap) and the greedy final turn of 30 unseen edit drills
(valid call, exact path, exact old_str, exact new_str). The first policy is the baseline column.
``--pretrain-steps N`` adds an arm: the untrained tiny model trained for N steps on the copy task
itself (variable gap, 100-token vocabulary) and on a fixed-offset variant, to show whether content
copying forms at all within that budget. ``--json`` prints one JSON object as the last line.

    python bench/copy_bench.py [--policies tiny,tiny-sft] [--pretrain-steps 1500] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch


def copy_pretrain(model, steps: int, *, vocab_hi: int = 100, span: int = 16, gap: bool = True, lr: float = 1e-3,
                  seed: int = 0) -> float:
    """Train ``model`` on ``span, [gap], span`` sequences (loss on the second span); final loss."""
    from swetrain.train.batch import token_logprobs

    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    loss = torch.tensor(0.0)
    for _ in range(steps):
        g = int(torch.randint(0, 17, (1,), generator=gen)) if gap else 0
        n = int(torch.randint(4, span + 1, (1,), generator=gen)) if gap else span
        first = torch.randint(10, vocab_hi, (32, n), generator=gen)
        x = torch.cat([first, torch.randint(10, vocab_hi, (32, g), generator=gen), first], 1)
        mask = torch.zeros_like(x)
        mask[:, n + g + 1:] = 1
        loss = -(token_logprobs(model, x, torch.ones_like(x), mask) * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    model.eval()
    return float(loss)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policies", default="tiny,tiny-sft", help="comma-separated policy specs or model folders")
    ap.add_argument("--drills", type=int, default=30)
    ap.add_argument("--pretrain-steps", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from rich.console import Console
    from rich.table import Table
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from swetrain.eval.copy_skill import copy_skill
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.train.policy_spec import resolve_policy_path

    configure_torch_threads()
    rows: dict[str, dict[str, float]] = {}
    for spec in [s for s in args.policies.split(",") if s]:
        path = resolve_policy_path(spec)
        t0 = time.monotonic()
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
        rows[spec] = {**copy_skill(model, AutoTokenizer.from_pretrained(path), drills=args.drills),
                      "seconds": round(time.monotonic() - t0, 1)}
    if args.pretrain_steps:
        path = resolve_policy_path("tiny")
        tok = AutoTokenizer.from_pretrained(path)
        for name, gap in (("gap", True), ("fixed", False)):
            t0 = time.monotonic()
            model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
            final = copy_pretrain(model, args.pretrain_steps, gap=gap)
            arm = f"tiny + {args.pretrain_steps} copy steps ({name} offset)"
            rows[arm] = {**copy_skill(model, tok, drills=args.drills), "copy_loss": round(final, 3),
                         "seconds": round(time.monotonic() - t0, 1)}
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
