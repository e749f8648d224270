"""The main job: ``swetrain quickstart``.

Builds (or reuses) the built-in suite and the base policy (the tiny model with its SFT warm start
by default), evaluates it on held-out tasks (Resolved@1, Resolved@2, conditional recovery), runs
FC-SWE RL for a short schedule, evaluates again, and writes ``report.md``, plots and
``summary.json`` into the run directory.
"""

from __future__ import annotations

import json
import logging
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


# Rollout/eval settings that fit the scripted-repair demonstrations the base policy imitates (a
# ~1,100-token prompt + five turns ~2,100 tokens; a str_replace call up to ~150 tokens) and sample
# it at a lower temperature (the trainer recomputes old log-probs itself, so the clipped FC-SWE
# ratio stays consistent). Command-line overrides come after these and win.
QUICKSTART_ROLLOUT = (
    "rollout.max_new_tokens=192",
    "rollout.max_context_tokens=3072",
    "rollout.temperature=0.5",
    # two episodes in flight: one generates while the other's sandbox runs tests (~1.2-1.5x)
    "rollout.workers=2",
)


@dataclass
class QuickstartOptions:
    out: Path = Path("runs/quickstart")
    policy: str = "tiny-sft"
    steps: int = 3
    seed: int = 0
    eval_tasks: int = 12
    eval_chains: int = 1
    tasks_per_step: int = 2
    group: int = 4
    overrides: tuple[str, ...] = ()
    progress: bool = True
    tasks_file: Path | None = None  # a built-in-format tasks.jsonl instead of the shipped suite


def _suite(split: str, tasks_file: Path | None) -> list[Any]:
    from swetrain.tasks.builtin import load_builtin

    kwargs = {"path": tasks_file} if tasks_file else {}
    return sorted(load_builtin(split=split, **kwargs), key=lambda t: t.instance_id)


def _heldout(n: int, seed: int, tasks_file: Path | None = None) -> list[Any]:
    tasks = _suite("heldout", tasks_file)
    random.Random(seed).shuffle(tasks)
    return tasks[:n]


def _prepare_out(out: Path) -> None:
    if out.exists() and any(out.iterdir()):
        markers = ("summary.json", "config.yaml", "eval_before", "checkpoints")
        if not any((out / m).exists() for m in markers):
            raise FileExistsError(f"--out {out} exists and does not look like a quickstart run; choose another folder")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def run_quickstart(opts: QuickstartOptions, console: Any = None) -> dict[str, Any]:
    """Run the quickstart; returns ``summary.json``'s content."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from swetrain.eval.evaluate import evaluate_policy
    from swetrain.eval.report import write_report
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.train.config import load_config
    from swetrain.train.metrics import read_metrics
    from swetrain.policy.spec import resolve_policy_path
    from swetrain.train.rl import RLTrainer

    console = console or Console()
    configure_torch_threads()
    started = time.monotonic()
    out = Path(opts.out)
    _prepare_out(out)
    timings: dict[str, float] = {}
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, disable=not opts.progress,
    )
    with progress:
        t0 = time.monotonic()
        heldout = _heldout(opts.eval_tasks, opts.seed, opts.tasks_file)
        train_tasks = _suite("train", opts.tasks_file)
        base_path = resolve_policy_path(opts.policy, progress=progress)
        timings["prepare_s"] = time.monotonic() - t0
        config = load_config(
            "fcswe",
            overrides=[
                f"train.steps={opts.steps}",
                f"train.save_every={max(1, opts.steps // 2)}",
                f"seed={opts.seed}",
                f"rollout.tasks_per_step={opts.tasks_per_step}",
                f"rollout.group={opts.group}",
                "logging.progress=false",
                *QUICKSTART_ROLLOUT,
                *opts.overrides,
            ],
        )
        config.policy = str(base_path)
        ro = config.rollout
        eval_kwargs = dict(
            chains=opts.eval_chains,
            attempts=2,
            context_variant="patch+verifier",
            seed=opts.seed + 12345,
            max_turns=ro.max_turns,
            max_new_tokens=ro.max_new_tokens,
            max_context_tokens=ro.max_context_tokens,
            temperature=ro.temperature,
            workers=ro.workers,
        )

        def eval_bar(label: str):
            bar = progress.add_task(label, total=len(heldout) * opts.eval_chains)
            return bar, (lambda result: progress.advance(bar))

        t0 = time.monotonic()
        _, cb = eval_bar("evaluate base policy (held-out)")
        base_policy = HFPolicy(base_path)
        before = evaluate_policy(base_policy, heldout, out / "eval_before", on_result=cb, **eval_kwargs)
        timings["eval_before_s"] = time.monotonic() - t0
        del base_policy

        t0 = time.monotonic()
        rl_bar = progress.add_task(f"FC-SWE RL ({opts.steps} steps)", total=opts.steps)

        def on_step(step: int, metrics: dict[str, Any]) -> None:
            progress.update(
                rl_bar, completed=step,
                description=f"FC-SWE RL step {step}/{opts.steps} reward {metrics.get('reward/mean', 0.0):.2f}",
            )

        trainer = RLTrainer(config, out, tasks=train_tasks, policy_path=base_path, on_step=on_step)
        trainer.train()
        timings["rl_s"] = time.monotonic() - t0

        t0 = time.monotonic()
        _, cb = eval_bar("evaluate trained policy (held-out)")
        after = evaluate_policy(trainer.policy, heldout, out / "eval_after", on_result=cb, **eval_kwargs)
        timings["eval_after_s"] = time.monotonic() - t0

    from swetrain.train.checkpoint import latest_checkpoint

    ckpt = latest_checkpoint(out)
    summary = {
        "before": before.headline(),
        "after": after.headline(),
        "steps": trainer.step,
        "base_checkpoint": str(base_path),
        "trained_checkpoint": str(ckpt / "model") if ckpt else None,
        "policy": opts.policy,
        "recipe": "fcswe",
        "seed": opts.seed,
        "eval_tasks": before.n_tasks,
        "eval_chains": opts.eval_chains,
        "eval_before": before.to_dict(),
        "eval_after": after.to_dict(),
        "timings_s": {k: round(v, 1) for k, v in timings.items()},
        "total_s": round(time.monotonic() - started, 1),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    notes = [
        f"Total wall time {summary['total_s']:.0f} s ({', '.join(f'{k} {v:.0f}' for k, v in summary['timings_s'].items())}).",
        "Held-out numbers come from few tasks and one sampling seed: differences of a few points are noise.",
    ]
    write_report(out, summary=summary, metrics=read_metrics(out), config=config.model_dump(mode="json"), notes=notes)
    return summary
