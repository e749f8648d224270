"""``swetrain curriculum``: mastery maps, RL frontier selection and the expand step's refresh pool.

    swetrain curriculum mastery --policy smollm2-sft --split train --rollouts 4 --out mastery.json
    swetrain curriculum ingest  --mastery mastery.json --data runs/fcswe --phase rl-1 --evidence-only
    swetrain curriculum select  --mastery mastery.json --split train --out frontier.jsonl --max-tasks 64
    swetrain train --recipe fcswe --out runs/fcswe tasks.source=frontier.jsonl
    swetrain sft --data runs/fcswe --mastery mastery.json --budget 256 ...   # Repair SFT quotas
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

curriculum_app = typer.Typer(help="Refresh-repair-expand curriculum: mastery, frontier, refresh pool.",
                             no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(curriculum_app, name="curriculum")


def _load_map(path: Path, policy: str = "", *, must_exist: bool = True):
    from swetrain.curriculum.mastery import MasteryError, MasteryMap

    try:
        return MasteryMap.load(path) if must_exist or path.exists() else MasteryMap(policy=policy)
    except MasteryError as exc:
        raise typer.BadParameter(str(exc), param_hint="--mastery") from None


def _print_summary(mastery, as_json: bool, extra: dict | None = None) -> None:
    info = {**mastery.summary(), **(extra or {})}
    if as_json:
        typer.echo(json.dumps(info, default=str))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("instances", "estimated", "mean pass rate", "zero", "frontier", "saturated", "ever solved")
    table.add_row(*(f"{info[k]:.3f}" if k == "mean_pass_rate" else str(info[k])
                    for k in ("instances", "estimated", "mean_pass_rate", "zero", "frontier", "saturated", "ever_solved")))
    Console().print(table)
    for key, value in (extra or {}).items():
        typer.echo(f"{key}: {value}")


@curriculum_app.command("mastery")
def mastery_cmd(
    policy: str = typer.Option(..., "--policy", help="policy spec (docs/policy.md): model folder, tiny-sft, smollm2-sft, openai:..., scripted-repair, ..."),
    out: Path = typer.Option(..., "--out", help="mastery map (JSON; updated in place when it exists)"),
    tasks: str = typer.Option("builtin", "--tasks", help="tasks file (JSONL/JSON/Parquet) or 'builtin'"),
    split: str = typer.Option("train", "--split", help="only tasks of this split ('' for all)"),
    limit: int = typer.Option(0, "--limit", min=0, help="estimate this many tasks (seeded shuffle; 0 = all)"),
    rollouts: int = typer.Option(4, "--rollouts", min=1, help="M: independent rollouts per task"),
    phase: str = typer.Option("base", "--phase", help="name of this estimate (base, rl-1, sft-1, ...)"),
    runs_dir: Path = typer.Option(None, "--runs-dir", help="where the rollouts' trajectories go (default: OUT.runs/)"),
    resume: bool = typer.Option(False, "--resume", help="skip tasks that already have an estimate of this phase"),
    seed: int = typer.Option(0, "--seed"),
    temperature: Optional[float] = typer.Option(None, "--temperature", min=1e-6, help="sampling temperature (default 0.5)"),
    top_p: Optional[float] = typer.Option(None, "--top-p", help="nucleus mass in (0, 1] (default 1.0)"),
    top_k: Optional[int] = typer.Option(None, "--top-k", min=0, help="sample among the k most likely tokens (default 0 = off)"),
    max_turns: Optional[int] = typer.Option(None, "--max-turns", min=1, help="agent turns per attempt (default 8)"),
    max_new_tokens: Optional[int] = typer.Option(None, "--max-new-tokens", min=1, help="tokens per generation call (default 192)"),
    max_context_tokens: Optional[int] = typer.Option(None, "--max-context-tokens", min=64, help="context tokens per attempt (default 3072)"),
    workers: int = typer.Option(1, "--workers", min=1, help="episodes run concurrently"),
    as_json: bool = typer.Option(False, "--json", help="print the map's summary as one JSON line"),
) -> None:
    """Estimate per-task pass rates (M independent rollouts, real sandboxes and verifier)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from swetrain.config import ConfigError
    from swetrain.curriculum.mastery import estimate_mastery
    from swetrain.rollout.errors import NoTrajectoryError
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.rollout.cli import build_policy, policy_spec, sample_tasks
    from swetrain.rollout.sampling import sampling_defaults

    try:
        sampling = sampling_defaults("mastery").override(
            temperature=temperature, top_p=top_p, top_k=top_k, max_turns=max_turns, max_new_tokens=max_new_tokens,
            max_context_tokens=max_context_tokens)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from None
    configure_torch_threads()
    policy_spec(policy)
    mastery = _load_map(out, policy, must_exist=False)
    chosen = sample_tasks(tasks, split or None, seed, limit)
    from swetrain.env.backend import default_sandbox
    from swetrain.env.cli import check_sandbox_or_exit

    check_sandbox_or_exit(default_sandbox(), chosen)  # every task environment can run its tests
    if resume:
        done = mastery.estimated(phase)
        chosen = [t for t in chosen if t.instance_id not in done]
    runs = runs_dir or out.with_name(out.name + ".runs")
    changes: dict = {"refreshed": 0, "new_evidence": 0, "skipped": {}}
    if chosen:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      disable=as_json) as progress:
            bar = progress.add_task(f"mastery {policy}", total=len(chosen) * rollouts)
            try:
                changes = estimate_mastery(
                    build_policy(policy), chosen, runs / phase, mastery, phase=phase, rollouts=rollouts, seed=seed,
                    workers=workers, sampling=sampling, on_result=lambda _r: progress.advance(bar),
                )
            except NoTrajectoryError as exc:  # mostly infrastructure failures: the map is not updated
                progress.stop()
                typer.echo(f"error: {' '.join(str(exc).split())}", err=True)
                raise typer.Exit(1) from None
        mastery.save(out)
    _print_summary(mastery, as_json, {"phase": phase, "refreshed": changes["refreshed"],
                                      "skipped": len(changes["skipped"]), "map": str(out)})


@curriculum_app.command("ingest")
def ingest_cmd(
    mastery_path: Path = typer.Option(..., "--mastery", help="mastery map to update (created when absent)"),
    data: Path = typer.Option(..., "--data", help="a run directory (or its trajectories/) of eval, rollout or RL"),
    phase: str = typer.Option(..., "--phase", help="name of the estimate these trajectories give"),
    evidence_only: bool = typer.Option(False, "--evidence-only",
                                       help="only record verified successes as H(x) (RL history: the policy moved during the run)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Fold stored trajectories into a mastery map (first attempts refresh p_hat; successes set H)."""
    from swetrain.curriculum.mastery import update_from_trajectories
    from swetrain.rollout.store import TrajectoryStore

    run_dir = data.parent if data.name == "trajectories" else data
    if not (run_dir / "trajectories").is_dir():
        raise typer.BadParameter(f"{run_dir} has no trajectories/ folder", param_hint="--data")
    mastery = _load_map(mastery_path, must_exist=False)
    changes = update_from_trajectories(mastery, TrajectoryStore(run_dir).read_all(), phase, refresh=not evidence_only)
    mastery.save(mastery_path)
    _print_summary(mastery, as_json, {"phase": phase, **changes})


@curriculum_app.command("select")
def select_cmd(
    mastery_path: Path = typer.Option(..., "--mastery", help="mastery map"),
    out: Path = typer.Option(..., "--out", help="tasks file to write (JSONL or .parquet) for `swetrain train tasks.source=`"),
    tasks: str = typer.Option("builtin", "--tasks", help="candidate tasks file or 'builtin'"),
    split: str = typer.Option("train", "--split", help="only candidates of this split ('' for all)"),
    max_tasks: int = typer.Option(0, "--max-tasks", min=0, help="size of the RL set (0 = every eligible task)"),
    evidence_share: float = typer.Option(0.25, "--evidence-share", min=0.0, max=1.0,
                                         help="at most this share: zero-pass tasks with a historical success"),
    expand: int = typer.Option(0, "--expand", min=0, help="also draw this many tasks whose BASE-PHASE rate was 0 or 1 (refresh pool)"),
    base_phase: str = typer.Option("base", "--base-phase", help="the estimate --expand draws from"),
    seed: int = typer.Option(0, "--seed"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Write the next RL set: the informative frontier (0 < p_hat < 1) plus evidence-backed zeros."""
    from swetrain.curriculum.select import FrontierConfig, refresh_pool, select_frontier
    from swetrain.rollout.cli import load_task_spec
    from swetrain.tasks.record import save_tasks

    mastery = _load_map(mastery_path)
    candidates = {t.instance_id: t for t in load_task_spec(tasks, split or None)}
    selection = select_frontier(mastery, candidates, FrontierConfig(max_tasks=max_tasks or None,
                                                                    evidence_share=evidence_share, seed=seed))
    chosen = selection.selected
    if expand:
        chosen = refresh_pool(mastery, chosen, candidates, expand, base_phase=base_phase, seed=seed)
    if not chosen:
        typer.echo(f"no task qualifies ({selection.counts()}); estimate more tasks or with more rollouts", err=True)
        raise typer.Exit(2)
    save_tasks([candidates[i] for i in chosen], out)
    info = {**selection.counts(), "written": len(chosen), "out": str(out)}
    typer.echo(json.dumps(info) if as_json else "  ".join(f"{k} {v}" for k, v in info.items()))


@curriculum_app.command("show")
def show_cmd(
    mastery_path: Path = typer.Option(..., "--mastery", help="mastery map"),
    compare: str = typer.Option("", "--compare", help="BEFORE,AFTER phases: paired improved/unchanged/regressed counts"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Summarise a mastery map (and compare two phases on matched instances)."""
    from swetrain.curriculum.mastery import regressions

    mastery = _load_map(mastery_path)
    extra: dict = {}
    if compare:
        parts = compare.split(",")
        if len(parts) != 2 or not all(parts):
            raise typer.BadParameter(f"{compare!r}: expected BEFORE,AFTER", param_hint="--compare")
        extra = {k: len(v) for k, v in regressions(mastery, parts[0], parts[1]).items()}
    _print_summary(mastery, as_json, extra)
