"""``swetrain eval``: Resolved@1, Resolved@2 and conditional recovery of a policy on a task split."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("eval")(evaluate)


def evaluate(
    policy: str = typer.Option("tiny-sft", "--policy", help="model folder or tiny | tiny-sft | tiny-sft-build | smollm2 | smollm2-sft"),
    tasks: str = typer.Option("builtin", "--tasks", help="tasks file (JSONL/JSON/Parquet) or 'builtin'"),
    split: str = typer.Option("heldout", "--split", help="only tasks of this split ('' for all)"),
    limit: int = typer.Option(0, "--limit", min=0, help="evaluate this many tasks (seeded shuffle; 0 = all)"),
    out: Path = typer.Option(Path("runs/eval"), "--out", help="folder for trajectories and eval.json"),
    chains: int = typer.Option(1, "--chains", min=1, help="independent chains per task"),
    attempts: int = typer.Option(2, "--attempts", min=1, help="attempts per chain (attempt 2 sees the failed patch + diagnostics)"),
    seed: int = typer.Option(0, "--seed"),
    temperature: float = typer.Option(0.5, "--temperature", min=1e-6),
    max_turns: int = typer.Option(8, "--max-turns", min=1),
    max_new_tokens: int = typer.Option(192, "--max-new-tokens", min=1),
    max_context_tokens: int = typer.Option(3072, "--max-context-tokens", min=64),
    workers: int = typer.Option(1, "--workers", min=1, help="episodes run concurrently"),
    as_json: bool = typer.Option(False, "--json", help="print eval.json's headline as one JSON line"),
) -> None:
    """Evaluate a policy (defaults: the quickstart's held-out protocol and sampling settings)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from swetrain.eval.evaluate import evaluate_policy
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.rollout.cli import _model_path, _sample_tasks
    from swetrain.rollout.errors import NoTrajectoryError

    configure_torch_threads()
    chosen = _sample_tasks(tasks, split or None, seed, limit)
    path = _model_path(policy)
    out.mkdir(parents=True, exist_ok=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  disable=as_json) as progress:
        bar = progress.add_task(f"eval {policy}", total=len(chosen) * chains)
        try:
            result = evaluate_policy(
                HFPolicy(path), chosen, out, chains=chains, attempts=attempts, seed=seed, max_turns=max_turns,
                max_new_tokens=max_new_tokens, max_context_tokens=max_context_tokens, temperature=temperature,
                workers=workers, on_result=lambda _r: progress.advance(bar),
            )
        except NoTrajectoryError as exc:  # nothing to score: say why in one line, exit 1
            failure = str(exc)
        else:
            failure = None
    if failure is not None:
        typer.echo(" ".join(failure.split()), err=True)
        raise typer.Exit(code=1)
    info = {"policy": policy, "policy_path": str(path), "tasks": tasks, "split": split, **result.to_dict()}
    (out / "eval.json").write_text(json.dumps(info, indent=2) + "\n")
    head = {**result.headline(), "n_tasks": result.n_tasks, "invalid_turn_rate": result.invalid_turn_rate,
            "seconds": round(result.seconds, 1)}
    if as_json:
        typer.echo(json.dumps(head))
    else:
        typer.echo(f"Resolved@1 {100 * head['resolved_at_1']:.1f}%  Resolved@2 {100 * head['resolved_at_2']:.1f}%  "
                   f"conditional recovery {100 * head['conditional_recovery']:.1f}%  on {result.n_tasks} tasks "
                   f"(invalid turns {100 * result.invalid_turn_rate:.0f}%); {out / 'eval.json'}")
