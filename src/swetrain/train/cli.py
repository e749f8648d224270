"""``swetrain train``, ``swetrain sft``, ``swetrain warmstart`` and the main job ``swetrain quickstart``."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("train")(train)
    app.command("sft")(sft)
    app.command("warmstart")(warmstart)
    app.command("quickstart")(quickstart)


def train(
    recipe: str = typer.Option(..., "--recipe", help="grpo | fcswe | minirl"),
    out: Path = typer.Option(..., "--out", help="run directory"),
    config: Path = typer.Option(None, "--config", help="YAML merged over the recipe"),
    resume: bool = typer.Option(False, "--resume", help="continue from the run directory's latest checkpoint"),
    overrides: list[str] = typer.Argument(None, help="dotted key=value overrides, e.g. optim.lr=1e-4 rollout.group=4"),
    sandbox: str = typer.Option("local", "--sandbox", help="workspace backend: local (bubblewrap) or docker (the task's image)"),
) -> None:
    """RL training with a recipe (rollout -> verify -> advantages -> update -> sync)."""
    import json

    from rich.console import Console

    from swetrain.train.config import ConfigError, load_config
    from swetrain.train.rl import RLTrainer

    console = Console()
    try:
        cfg = load_config(recipe, config, list(overrides or []))
    except ConfigError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    from swetrain.env.cli import use_sandbox

    use_sandbox(sandbox, [])  # task images are checked as each task's workspace is made
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, disable=not cfg.logging.progress) as progress:
        bar = progress.add_task(f"{cfg.recipe} RL", total=cfg.train.steps)

        def on_step(step: int, metrics: dict) -> None:
            progress.update(bar, completed=step, description=f"{cfg.recipe} step {step} reward {metrics.get('reward/mean', 0):.2f}")

        if not resume and ((out / "metrics.jsonl").exists() or (out / "checkpoints").exists()):
            console.print(f"[red]{out} already holds a run; pass --resume to continue it or choose a new --out[/red]")
            raise typer.Exit(2)
        from swetrain.rollout.errors import NoTrajectoryError
        from swetrain.rollout.store import DiskFullError, StoreError
        from swetrain.train.checkpoint import CheckpointError

        try:
            trainer = RLTrainer(cfg, out, on_step=on_step)
            last = trainer.train(resume=resume)
        except (FileNotFoundError, FileExistsError, ValueError) as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(2) from None
        except NoTrajectoryError as exc:  # a step stored nothing: say why in one line
            typer.echo(" ".join(str(exc).split()), err=True)
            raise typer.Exit(1) from None
        except (StoreError, DiskFullError, CheckpointError) as exc:  # names the file and the problem
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from None
    console.print(f"run directory: {out}  (metrics.jsonl, tensorboard/, trajectories/, checkpoints/)")
    console.print(json.dumps({k: v for k, v in last.items() if isinstance(v, (int, float))}, sort_keys=True))


def sft(
    data: Path = typer.Option(..., "--data", help="trajectory store: a run directory or its trajectories/ folder"),
    policy: str = typer.Option("tiny", "--policy", help="model folder or tiny | tiny-sft | smollm2"),
    out: Path = typer.Option(..., "--out", help="folder for the fine-tuned model"),
    epochs: int = typer.Option(3, "--epochs"),
    lr: float = typer.Option(1e-4, "--lr"),
    all_trajectories: bool = typer.Option(False, "--all", help="also train on unresolved trajectories"),
    mastery: Path = typer.Option(None, "--mastery", help="mastery map: replay by quota, low-mastery tasks first (RRE)"),
    budget: int = typer.Option(0, "--budget", min=0, help="with --mastery: repair samples, successes cycled to fill it (0: each chosen one once)"),
    max_quota: int = typer.Option(4, "--max-quota", min=0, help="with --mastery: distinct successes of an unmastered task"),
    min_quota: int = typer.Option(1, "--min-quota", min=0, help="with --mastery: distinct successes of a mastered task"),
) -> None:
    """Repair SFT: fine-tune on (verifier-approved) stored trajectories, assistant tokens only."""
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.rollout.store import TrajectoryStore
    from swetrain.train.policy_spec import resolve_policy_path
    from swetrain.train.sft import SFTConfig, SFTTrainer, sample_for_sft

    configure_torch_threads()
    run_dir = data.parent if data.name == "trajectories" else data
    trajs = TrajectoryStore(run_dir).read_all()
    if mastery is not None:
        from swetrain.curriculum.mastery import MasteryError, MasteryMap
        from swetrain.curriculum.replay import plan_replay

        if all_trajectories:
            raise typer.BadParameter("--all cannot be combined with --mastery (replay uses verified successes only)",
                                     param_hint="--all")
        try:
            trajs = plan_replay(trajs, MasteryMap.load(mastery), budget or None, max_quota=max_quota,
                                min_quota=min_quota)
        except MasteryError as exc:
            raise typer.BadParameter(str(exc), param_hint="--mastery") from None
    elif not all_trajectories:
        trajs = [t for t in trajs if t.resolved]
    if not trajs:
        typer.echo(f"no {'resolved ' if not all_trajectories else ''}trajectories in {run_dir}/trajectories", err=True)
        raise typer.Exit(2)
    trainer = SFTTrainer.from_pretrained(resolve_policy_path(policy), SFTConfig(epochs=epochs, lr=lr))
    metrics = trainer.train([sample_for_sft(t) for t in trajs])
    trainer.save(out)
    typer.echo(f"trained on {len(trajs)} trajectories; final loss {metrics['loss']:.4f}; saved to {out}")


def warmstart(
    base: str = typer.Option("tiny", "--base", help="tiny | smollm2"),
    force: bool = typer.Option(False, "--force", help="rebuild even when cached"),
    ship: bool = typer.Option(False, "--ship", help="also copy the tiny result into the package (what `tiny-sft` loads)"),
) -> None:
    """Build (or show) the cached SFT warm start of a base policy from scripted repair demos."""
    import json

    from swetrain.train.warmstart import ensure_warm_start, ship_warm_start

    if ship and base != "tiny":
        raise typer.BadParameter("only the tiny warm start is shipped", param_hint="--ship")
    path = ensure_warm_start(base, progress=True, force=force)
    if ship:
        typer.echo(f"shipped to {ship_warm_start(path)}")
    info = json.loads((path / "warmstart.json").read_text())
    typer.echo(f"{path}\n{info['demonstrations']} demonstrations, NLL {info['nll_before']:.3f} -> {info['nll_after']:.3f}, "
               f"built in {info['total_seconds']} s")


def quickstart(
    out: Path = typer.Option(Path("runs/quickstart"), "--out", help="run directory (replaced if it holds a previous quickstart)"),
    policy: str = typer.Option("tiny-sft", "--policy", help="tiny-sft (default) | smollm2-sft | tiny | smollm2 | a model folder"),
    steps: int = typer.Option(3, "--steps", help="FC-SWE RL steps"),
    seed: int = typer.Option(0, "--seed"),
    eval_tasks: int = typer.Option(12, "--eval-tasks", help="held-out tasks evaluated before and after"),
    tasks_per_step: int = typer.Option(2, "--tasks-per-step", help="training tasks per RL step"),
    group: int = typer.Option(4, "--group", help="FC-SWE chains per task (G)"),
    tasks: Path = typer.Option(None, "--tasks", help="a built-in-format tasks.jsonl instead of the shipped suite"),
    overrides: list[str] = typer.Argument(None, help="extra fcswe recipe overrides key=value"),
    sandbox: str = typer.Option("local", "--sandbox", help="workspace backend: local (bubblewrap) or docker (--tasks from `swetrain env build-image`)"),
) -> None:
    """The main job: base policy -> held-out eval -> FC-SWE RL -> held-out eval -> report."""
    from rich.console import Console

    from swetrain.env.cli import use_sandbox

    if sandbox == "docker" and tasks is not None:
        from swetrain.tasks.record import load_tasks

        use_sandbox(sandbox, load_tasks(tasks))
    else:
        use_sandbox(sandbox, [])

    from swetrain.train.quickstart import QuickstartOptions, run_quickstart

    console = Console()
    try:
        summary = run_quickstart(
            QuickstartOptions(
                out=out, policy=policy, steps=steps, seed=seed, eval_tasks=eval_tasks, tasks_per_step=tasks_per_step,
                group=group, tasks_file=tasks, overrides=tuple(overrides or ()),
            ),
            console,
        )
    except FileExistsError as exc:
        raise typer.BadParameter(str(exc), param_hint="--out") from None
    b, a = summary["before"], summary["after"]
    console.print(
        f"Resolved@1 {100 * b['resolved_at_1']:.1f}% -> {100 * a['resolved_at_1']:.1f}%  |  "
        f"Resolved@2 {100 * b['resolved_at_2']:.1f}% -> {100 * a['resolved_at_2']:.1f}%  |  "
        f"conditional recovery {100 * b['conditional_recovery']:.1f}% -> {100 * a['conditional_recovery']:.1f}%"
    )
    console.print(f"report: {out / 'report.md'}   summary: {out / 'summary.json'}   ({summary['total_s']:.0f} s)")
