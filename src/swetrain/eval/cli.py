"""``swetrain eval``: FC-SWE's evaluation protocol (Resolved@K, feedback vs resample, failure-context
ablation, token cost, seeds) for any policy spec; writes ``RUN_DIR/eval.json``. See docs/eval.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer


report_app = typer.Typer(help="Reports: compare eval runs (swetrain eval) and plot training dynamics.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("eval")(evaluate)
    app.add_typer(report_app, name="report")


@report_app.command("compare")
def compare_cmd(
    runs: list[Path] = typer.Argument(..., help="eval run folders (or their eval.json) over the same tasks; the first is the reference"),
    out: Path = typer.Option(..., "--out", help="report folder (compare.md, compare.json, PNG plots); replaced atomically"),
    resamples: int = typer.Option(10_000, "--resamples", min=100, help="paired-bootstrap resamples"),
) -> None:
    """Compare eval runs: Resolved@K curves, feedback vs resample, context ablation, tokens, routes, paired CIs."""
    from swetrain.eval.compare import compare_runs
    from swetrain.eval.protocol import EvalError

    try:
        path = compare_runs(runs, out, n_boot=resamples)
    except EvalError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(str(path))


@report_app.command("train")
def train_cmd(
    run_dir: Path = typer.Argument(..., help="a `swetrain train` run folder (metrics.jsonl)"),
    out: Optional[Path] = typer.Option(None, "--out", help="report folder (default RUN_DIR/report)"),
) -> None:
    """Plot reward, first-attempt success and the second attempt's extra contribution per RL step."""
    from swetrain.eval.compare import train_report
    from swetrain.eval.protocol import EvalError

    try:
        path = train_report(run_dir, out)
    except EvalError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(str(path))


def evaluate(
    policy: str = typer.Option("tiny-sft", "--policy", help="policy spec (docs/policy.md): model folder, tiny-sft, smollm2-sft, openai:URL#..., scripted-repair[:SEED], ..."),
    tasks: str = typer.Option("builtin", "--tasks", help="tasks file (JSONL/JSON/Parquet) or 'builtin'"),
    split: str = typer.Option("heldout", "--split", help="only tasks of this split ('' for all)"),
    limit: int = typer.Option(0, "--limit", min=0, help="evaluate this many tasks (seeded shuffle of the split; 0 = all)"),
    tier: Optional[str] = typer.Option(None, "--tier", help="only tasks of this difficulty tier (easy | standard; default all)"),
    seed: int = typer.Option(0, "--seed", help="seed of the --limit task sample (decoding seeds: --seeds)"),
    out: Path = typer.Option(Path("runs/eval"), "--out", help="run folder (seed-*/trajectories and eval.json); must not hold an evaluation"),
    attempts: int = typer.Option(2, "--attempts", help="K: attempts per task (1-16); a chain stops at its first success"),
    mode: str = typer.Option("feedback", "--mode", help="feedback (attempt r+1 sees the failure context of r) | resample (every attempt fresh)"),
    context: Optional[str] = typer.Option(None, "--context", help="failure context in feedback mode: patch+verifier (default) | patch-only | none"),
    seeds: str = typer.Option("0", "--seeds", help="decoding seeds, comma-separated (e.g. 0,1,2): mean and spread over them"),
    preset: Optional[str] = typer.Option(None, "--preset", help="'paper': T 1.0, top-p 0.95, top-k 20, 150 turns, 200K context (explicit flags win)"),
    temperature: Optional[float] = typer.Option(None, "--temperature", help="sampling temperature (default 0.5; 0 = greedy)"),
    top_p: Optional[float] = typer.Option(None, "--top-p", help="nucleus mass in (0, 1] (default 1.0)"),
    top_k: Optional[int] = typer.Option(None, "--top-k", help="sample among the k most likely tokens (default 0 = off)"),
    max_turns: Optional[int] = typer.Option(None, "--max-turns", help="agent turns (actions) per attempt (default 8)"),
    max_new_tokens: Optional[int] = typer.Option(None, "--max-new-tokens", help="tokens per generation call (default 192)"),
    max_context_tokens: Optional[int] = typer.Option(None, "--max-context-tokens", help="context tokens per attempt (default 8192; capped by the policy window minus --max-new-tokens)"),
    context_budget: Optional[int] = typer.Option(None, "--context-budget", help="token budget of the failure context (default 2048)"),
    workers: int = typer.Option(1, "--workers", min=1, help="chains run concurrently"),
    edit_match: str = typer.Option("exact", "--edit-match", help="str_replace matching: exact (verbatim, R2E-Gym) | tolerant (docs/agent.md)"),
    as_json: bool = typer.Option(False, "--json", help="print the headline as one JSON line"),
    sandbox: str = typer.Option("local", "--sandbox", help="workspace backend: local (bubblewrap) or docker (the task's image)"),
    dtype: str = typer.Option("auto", "--dtype", help="weights' dtype of a local model: auto (float32 on CPU, bfloat16 on CUDA) | float32 | bfloat16 | bf16-native (bfloat16 where the device computes it natively: CUDA, AMX / AVX-512 BF16 / Arm BF16 CPUs; float32 elsewhere)"),
) -> None:
    """Evaluate a policy with FC-SWE's protocol and write RUN_DIR/eval.json."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from swetrain.eval.protocol import EvalError, EvalProtocol, parse_seeds, run_eval
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.rollout.cli import build_policy, policy_spec, sample_tasks
    from swetrain.rollout.errors import NoTrajectoryError

    try:
        protocol = EvalProtocol.build(
            preset=preset, context=context, attempts=attempts, mode=mode, seeds=parse_seeds(seeds),
            temperature=temperature, top_p=top_p, top_k=top_k, max_turns=max_turns, max_new_tokens=max_new_tokens,
            max_context_tokens=max_context_tokens, context_budget=context_budget, workers=workers,
            edit_match=edit_match,
        )
    except EvalError as exc:
        raise typer.BadParameter(str(exc)) from None
    spec = policy_spec(policy)
    if (out / "eval.json").exists():
        raise typer.BadParameter(f"{out} already holds an evaluation (eval.json); choose a new folder", param_hint="--out")
    configure_torch_threads()
    chosen = sample_tasks(tasks, split or None, seed, limit, tier)
    from swetrain.env.cli import use_sandbox

    use_sandbox(sandbox, chosen)
    built = build_policy(policy, dtype)
    info = {"split": split, "tier": tier, "task_source": tasks, "task_sample_seed": seed, "limit": limit}
    if getattr(built, "dtype", None) is not None:
        info["dtype"] = str(built.dtype).removeprefix("torch.")
    if spec.is_local_model:
        info["policy_path"] = str(spec.model_path())
    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=as_json) as progress:
        bar = progress.add_task(f"eval {policy} ({protocol.mode}, K={protocol.attempts})",
                                total=len(chosen) * len(protocol.seeds))
        try:
            record = run_eval(built, chosen, out, protocol, policy_name=policy, info=info,
                              on_result=lambda _r: progress.advance(bar))
        except EvalError as exc:
            raise typer.BadParameter(str(exc), param_hint="--out") from None
        except NoTrajectoryError as exc:  # nothing to score: say why in one line, exit 1
            failure = str(exc)
        else:
            failure = None
    if failure is not None:
        typer.echo(" ".join(failure.split()), err=True)
        raise typer.Exit(code=1)
    curve = record["resolved_at"]
    head = {
        "policy": policy, "mode": record["mode"], "context": record["context"], "attempts": record["attempts"],
        "seeds": record["seeds"], "n_tasks": len(record["tasks"]), "resolved_at": curve,
        "resolved_at_std": record["resolved_at_std"], "resolved_at_1": curve[0],
        "resolved_at_2": curve[1] if len(curve) > 1 else curve[0],
        "conditional_recovery": record["conditional_recovery"], "cumulative_tokens": record["cumulative_tokens"],
        "infra_failures": sum(len(v) for v in record["infra_failures"].values()),
        "invalid_turn_rate": record["invalid_turn_rate"], "seconds": record["seconds"], "eval_json": str(out / "eval.json"),
    }
    if as_json:
        typer.echo(json.dumps(head))
        return
    rec = record["conditional_recovery"]
    typer.echo(
        "Resolved@k " + " ".join(f"{100 * v:.1f}" for v in curve) + " (%)  "
        f"conditional recovery {'n/a' if rec is None else f'{100 * rec:.1f}%'}  tokens/task at K "
        f"{record['cumulative_tokens'][-1]:.0f}  on {len(record['tasks'])} tasks x {len(record['seeds'])} seed(s) "
        f"({record['mode']}, {record['context']}); {out / 'eval.json'}"
    )
