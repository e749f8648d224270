"""``swetrain rollout``: sample G chains x R attempts per task into RUN_DIR/trajectories/*.parquet."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    app.command("rollout")(rollout)


BUILTIN_SPLITS = ("train", "heldout")


def load_task_spec(spec: str, split: str | None) -> list:
    """The tasks ``--tasks`` names (``builtin`` or a tasks file) in ``--split``; a bad spec, an
    unknown split or no tasks at all is a usage error (``typer.BadParameter``) naming the option."""
    from swetrain.tasks.builtin import BuiltinError, load_builtin
    from swetrain.tasks.record import TaskLoadError, load_tasks

    if spec == "builtin" and split and split not in BUILTIN_SPLITS:
        raise typer.BadParameter(f"{split!r}: the built-in suite's splits are {', '.join(BUILTIN_SPLITS)}", param_hint="--split")
    try:
        if spec == "builtin":
            tasks = load_builtin(split)
        else:
            tasks = _with_builtin_snapshots(load_tasks(spec))
            if split:
                tasks = [t for t in tasks if t.split == split]
    except (TaskLoadError, BuiltinError, ValueError, OSError) as exc:  # a malformed row names file:line
        raise typer.BadParameter(str(exc), param_hint="--tasks") from None
    if not tasks and split and spec != "builtin":
        splits = sorted({str(t.split) for t in load_tasks(spec) if t.split})
        raise typer.BadParameter(f"no task of {spec} has split {split!r} (its splits: {', '.join(splits) or 'none'})",
                                 param_hint="--split")
    if not tasks:
        raise typer.BadParameter(f"no tasks in {spec!r}" + (f" with split {split!r}" if split else ""), param_hint="--tasks")
    return tasks


def _with_builtin_snapshots(tasks: list) -> list:
    """Rows of the built-in suite saved to a file (``repo`` ``swetrain-builtin/...``, no ``source``)
    get the built-in snapshot they name, as ``--tasks builtin`` would; ids not in the shipped suite
    are left as they are (their workspace error names the missing source)."""
    def unsourced_builtin(t) -> bool:
        return not t.source and not t.environment and t.repo.startswith("swetrain-builtin/")

    if not any(unsourced_builtin(t) for t in tasks):
        return tasks
    from swetrain.tasks.builtin import load_builtin

    snapshots = {t.instance_id: t.source for t in load_builtin(None)}
    return [t.model_copy(update={"source": snapshots[t.instance_id]})
            if unsourced_builtin(t) and t.instance_id in snapshots else t for t in tasks]


def filter_tier(tasks: list, tier: str | None) -> list:
    """Only the tasks of difficulty ``tier`` (:func:`swetrain.tasks.record.task_tier`), or a usage
    error naming the tiers there are."""
    if not tier:
        return tasks
    from swetrain.tasks.record import task_tier

    kept = [t for t in tasks if task_tier(t) == tier]
    if not kept:
        tiers = sorted({task_tier(t) for t in tasks})
        raise typer.BadParameter(f"no task has tier {tier!r} (tiers here: {', '.join(tiers) or 'none'})", param_hint="--tier")
    return kept


def sample_tasks(spec: str, split: str | None, seed: int, limit: int, tier: str | None = None) -> list:
    """The tasks of ``spec``/``split`` in a seeded shuffle of their sorted ids, the first ``limit``
    of them (0 = all): the same choice for the same seed, whatever the file's order."""
    import random

    chosen = sorted(filter_tier(load_task_spec(spec, split), tier), key=lambda t: t.instance_id)
    random.Random(seed).shuffle(chosen)
    return chosen[:limit] if limit else chosen


def policy_spec(spec: str):
    """``--policy`` parsed by the one spec grammar (:mod:`swetrain.policy.spec`), or a usage error
    naming the problem."""
    from swetrain.policy.spec import PolicySpecError, parse_policy_spec

    try:
        return parse_policy_spec(spec)
    except PolicySpecError as exc:
        raise typer.BadParameter(str(exc), param_hint="--policy") from None


def build_policy(spec: str, dtype: str | None = None):
    """The policy ``--policy`` names, built now: a bad spec is a usage error, not a traceback mid-run.

    ``dtype`` (``auto`` | ``float32`` | ``bfloat16`` | ...) sets the weights' dtype of a local model
    (docs/policy.md, "bf16 generation on CPU"); other backends refuse a dtype other than auto."""
    parsed = policy_spec(spec)
    kwargs = {}
    if dtype not in (None, "auto"):
        if not parsed.is_local_model:
            raise typer.BadParameter(f"--dtype {dtype}: policy {spec!r} is not a local model (only model weights "
                                     "run in a chosen dtype)", param_hint="--dtype")
        kwargs["dtype"] = dtype
    try:
        return parsed.build(**kwargs)
    except (ValueError, FileNotFoundError) as exc:  # unknown scripted name, missing weights, unknown dtype
        raise typer.BadParameter(str(exc), param_hint="--policy") from None


def _refuse_other_run(out: Path, **settings) -> None:
    """A run directory holding another run (other policy, group, attempts, context or seed) is a
    usage error: resuming into it would mix two runs' chains and rewrite its ``rollout.json``."""
    record = Path(out) / "rollout.json"
    if not record.is_file():
        return
    try:
        old = json.loads(record.read_text())
        stored = {**old.get("result", {}), "seed": old.get("config", {}).get("seed")}
    except (OSError, ValueError, AttributeError):
        raise typer.BadParameter(f"{out} holds an unreadable rollout.json; choose another folder", param_hint="--out") from None
    differ = {k: (stored.get(k), v) for k, v in settings.items() if k in stored and stored.get(k) != v}
    if differ:
        what = ", ".join(f"{k} {a!r} (now {b!r})" for k, (a, b) in differ.items())
        raise typer.BadParameter(f"{out} holds another rollout run: {what}; choose another folder, or the same "
                                 "settings to resume it", param_hint="--out")


def rollout(
    tasks: str = typer.Option(..., "--tasks", help="Tasks file (JSONL/JSON/Parquet) or 'builtin'."),
    policy: str = typer.Option(..., "--policy", help="Policy spec (docs/policy.md): a model folder, tiny, tiny-sft, smollm2[-sft], hf:PATH, openai:URL#..., vllm:PATH, scripted:NAME, scripted-repair[:SEED]."),
    out: Path = typer.Option(..., "--out", help="Run directory (trajectories/ and rollout.json go there)."),
    group: int = typer.Option(8, "--group", min=1, help="G: chains per task."),
    attempts: int = typer.Option(2, "--attempts", min=1, help="R: attempts per chain (recovery attempts run only after a failure)."),
    context: str = typer.Option("patch+verifier", "--context", help="Failure context of recovery attempts: patch+verifier | patch-only | none."),
    backend: str = typer.Option("local", "--backend", help="local (thread pool) or ray (actors)."),
    workers: int = typer.Option(1, "--workers", min=1, help="Chains (and workspaces) at once."),
    split: Optional[str] = typer.Option(None, "--split", help="Only tasks of this split (e.g. heldout)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="A seeded sample of N tasks (after --split; seed: --seed), as in eval."),
    max_turns: int = typer.Option(30, "--max-turns", min=1, help="Turns per attempt (FC-SWE: 100)."),
    max_tokens: int = typer.Option(512, "--max-tokens", min=1, help="Tokens per generation call."),
    max_context: int = typer.Option(16384, "--max-context", min=64, help="Context tokens per attempt (FC-SWE: 65536); never more than the policy's window minus --max-tokens."),
    max_output_tokens: int = typer.Option(0, "--max-output-tokens", min=0, help="Generated tokens per attempt (0: no limit)."),
    context_budget: int = typer.Option(2048, "--context-budget", min=64, help="Token budget of the failure context."),
    temperature: float = typer.Option(1.0, "--temperature", min=0.0),
    top_p: float = typer.Option(1.0, "--top-p", min=0.0, max=1.0),
    seed: int = typer.Option(0, "--seed"),
    infra_retries: int = typer.Option(2, "--infra-retries", min=0, help="Retries of a chain after infra failures."),
    max_infra_fraction: float = typer.Option(0.5, "--max-infra-fraction", min=0.01, max=1.0, help="Stop with an error when more than this share of tries were infrastructure failures."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster address (default: start Ray locally)."),
    ray_cpus: int = typer.Option(2, "--ray-cpus", min=1, help="CPUs of a locally started Ray."),
    resume: bool = typer.Option(True, "--resume/--no-resume", help="Skip chains already stored in RUN_DIR."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object of the results as the last line."),
    sandbox: str = typer.Option("local", "--sandbox", help="Workspace backend: local (bubblewrap) or docker (the task's image)."),
    edit_match: str = typer.Option("exact", "--edit-match", help="str_replace matching: exact (verbatim, R2E-Gym) | tolerant (docs/agent.md)."),
) -> None:
    """Roll out FC-SWE recovery chains: G chains x up to R attempts per task, verified, stored as Parquet."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from swetrain.agent.chains import CONTEXT_VARIANTS
    from swetrain.agent.loop import EpisodeLimits
    from swetrain.rollout.engine import BACKENDS, ChainJobConfig, RolloutEngine
    from swetrain.rollout.store import TrajectoryStore, write_json_atomic

    if context not in CONTEXT_VARIANTS:
        raise typer.BadParameter(f"{context!r} is not one of {', '.join(CONTEXT_VARIANTS)}", param_hint="--context")
    if backend not in BACKENDS:
        raise typer.BadParameter(f"{backend!r} is not one of {', '.join(BACKENDS)}", param_hint="--backend")
    from swetrain.env.edit_match import MODES as EDIT_MATCH_MODES

    if edit_match not in EDIT_MATCH_MODES:
        raise typer.BadParameter(f"{edit_match!r} is not one of {', '.join(EDIT_MATCH_MODES)}", param_hint="--edit-match")
    task_list = sample_tasks(tasks, split, seed, limit or 0)
    _refuse_other_run(out, policy=policy, group=group, attempts=attempts, context=context, seed=seed)
    from swetrain.env.cli import check_sandbox_or_exit

    check_sandbox_or_exit(sandbox, task_list)
    config = ChainJobConfig(
        group=group,
        attempts=attempts,
        context_variant=context,
        context_budget_tokens=context_budget,
        limits=EpisodeLimits(max_turns=max_turns, max_context_tokens=max_context, max_tokens_per_call=max_tokens,
                             max_output_tokens=max_output_tokens or None),
        seed=seed,
        temperature=temperature,
        top_p=top_p,
        max_infra_retries=infra_retries,
        max_infra_fraction=max_infra_fraction,
        sandbox=sandbox,
        edit_match=edit_match,
    )
    policy_spec(policy)  # a bad spec is a usage error on every backend, not a traceback mid-run
    from swetrain.policy.spec import untrained_warning

    if untrained_warning(policy):
        typer.echo(untrained_warning(policy), err=True)
    built = build_policy(policy) if backend == "local" else None
    engine = RolloutEngine(
        built, policy_factory=policy, backend=backend, workers=workers, config=config, ray_address=ray_address, ray_num_cpus=ray_cpus
    )
    store = TrajectoryStore(out)
    console = Console(stderr=True)
    total = len(task_list) * group
    with Progress(
        TextColumn("[bold]rollout"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(), console=console, transient=as_json,
    ) as progress:
        bar = progress.add_task("chains", total=total, status="")
        resolved = {"n": 0}

        def on_result(result) -> None:
            resolved["n"] += any(t.resolved for t in result.trajectories)
            progress.update(bar, advance=1, status=f"resolved chains {resolved['n']}")

        from swetrain.rollout.errors import InfraFailureError

        try:
            report = engine.run(task_list, store, resume=resume, on_result=on_result)
        except InfraFailureError as exc:  # the environment failed, not the policy: one line, exit 1
            progress.stop()
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(code=1) from None
        progress.update(bar, completed=total)
    from swetrain.rollout.engine import summarize

    report.metrics = summarize(store.read_all(), attempts)  # the whole run directory, resumed chains included
    summary = {
        "run_dir": str(out),
        "tasks": len(task_list),
        "group": group,
        "attempts": attempts,
        "context": context,
        "backend": backend,
        "sandbox": sandbox,
        "policy": policy,
        **{k: v for k, v in report.to_dict().items() if k != "metrics"},
        **report.metrics,
        "stored_rows": store.count(),
    }
    write_json_atomic(Path(out) / "rollout.json", {"config": {"seed": seed, "workers": workers, "max_turns": max_turns}, "result": summary})
    if report.skipped_tasks:
        for iid, why in report.skipped_tasks.items():
            console.print(f"[yellow]skipped {iid}[/yellow]: {why}")
    r1, r2 = report.metrics.get("resolved@1"), report.metrics.get("resolved@2")
    rec = report.metrics.get("conditional_recovery")
    fmt = lambda v: "n/a" if v is None else f"{100 * v:.1f}%"  # noqa: E731
    console.print(
        f"Resolved@1 {fmt(r1)}  Resolved@2 {fmt(r2)}  conditional recovery {fmt(rec)}  "
        f"({summary['stored_rows']} trajectories stored, {report.trajectories} new from {report.chains_done} chains"
        f"{f', {report.chains_resumed} chains resumed' if report.chains_resumed else ''}, {report.seconds:.1f}s) -> {out}"
    )
    if as_json:
        sys.stdout.write(json.dumps(summary, default=str) + "\n")
    from swetrain.rollout.errors import no_trajectory_message

    problem = no_trajectory_message(report)
    if problem is not None:  # every chain of this run was given up: a failure, not an empty success
        typer.echo(problem, err=True)
        raise typer.Exit(code=1)
