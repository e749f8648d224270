"""``swetrain train`` and ``swetrain sft`` (``warmstart`` and ``quickstart``: :mod:`swetrain.recipes.tiny.cli`)."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("train")(train)
    app.command("sft")(sft)


def _refuse_other_recipe(out: Path, cfg) -> None:
    """``--resume`` continues the same run: another recipe or policy in ``out/config.yaml`` is refused
    (continuing it would train one run under two configs and rewrite its config.yaml)."""
    import yaml

    saved = out / "config.yaml"
    if not saved.is_file():
        return
    try:
        old = yaml.safe_load(saved.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        typer.echo(f"error: {saved}: unreadable ({exc}); choose a new --out", err=True)
        raise typer.Exit(2) from None
    differ = [f"{k} {old.get(k)!r} (now {getattr(cfg, k)!r})" for k in ("recipe", "policy")
              if k in old and old.get(k) != getattr(cfg, k)]
    if differ:
        typer.echo(f"error: --resume: {out} holds another run ({', '.join(differ)}); resume it with its own "
                   "recipe and policy, or choose a new --out", err=True)
        raise typer.Exit(2)


def train(
    recipe: str = typer.Option(..., "--recipe", help="grpo | fcswe | minirl"),
    out: Path = typer.Option(..., "--out", help="run directory"),
    config: Path = typer.Option(None, "--config", help="YAML merged over the recipe"),
    resume: bool = typer.Option(False, "--resume", help="continue from the run directory's latest checkpoint"),
    overrides: list[str] = typer.Argument(None, help="dotted key=value overrides, e.g. optim.lr=1e-4 rollout.group=4"),
    sandbox: str = typer.Option(None, "--sandbox", help="workspace backend: local (bubblewrap) or docker (the task's image); default: the config's rollout.sandbox"),
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
    from swetrain.policy.spec import untrained_warning

    if untrained_warning(cfg.policy):
        typer.echo(untrained_warning(cfg.policy) + " Set it with policy=tiny-sft.", err=True)

    use_sandbox(sandbox or cfg.rollout.sandbox, [])  # task images are checked as each task's workspace is made
    cfg.rollout.sandbox = sandbox or cfg.rollout.sandbox
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, disable=not cfg.logging.progress) as progress:
        bar = progress.add_task(f"{cfg.recipe} RL", total=cfg.train.steps)

        def on_step(step: int, metrics: dict) -> None:
            progress.update(bar, completed=step, description=f"{cfg.recipe} step {step} reward {metrics.get('reward/mean', 0):.2f}")

        if not resume and ((out / "metrics.jsonl").exists() or (out / "checkpoints").exists()):
            console.print(f"[red]{out} already holds a run; pass --resume to continue it or choose a new --out[/red]")
            raise typer.Exit(2)
        if resume:
            _refuse_other_recipe(out, cfg)
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
    force: bool = typer.Option(False, "--force", help="replace what --out holds"),
) -> None:
    """Repair SFT: fine-tune on (verifier-approved) stored trajectories, assistant tokens only."""
    from swetrain.policy.threads import configure_torch_threads
    from swetrain.rollout.store import TrajectoryStore
    from swetrain.policy.spec import resolve_policy_path
    from swetrain.train.sft import SFTConfig, SFTTrainer, sample_for_sft

    run_dir = data.parent if data.name == "trajectories" else data
    if not (run_dir / "trajectories").is_dir():
        typer.echo(f"error: --data {data}: no trajectory store there (expected a run directory holding trajectories/)", err=True)
        raise typer.Exit(2)
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not force:
        typer.echo(f"error: --out {out} exists and is not empty (it may hold a model); choose another folder or pass --force", err=True)
        raise typer.Exit(2)
    configure_torch_threads()
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
