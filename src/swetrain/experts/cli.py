"""``swetrain experts``: paper 000's category-aware expert pipeline as one resumable command.

    swetrain experts --preset smoke --out runs/experts
    swetrain experts --config experts.yaml --out DIR [key=value ...]
"""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("experts", context_settings={"allow_extra_args": True, "ignore_unknown_options": False})(experts)


def experts(
    ctx: typer.Context,
    out: Path = typer.Option(..., "--out", help="pipeline directory (phases are run directories under it)"),
    config: Path = typer.Option(None, "--config", help="YAML config (swetrain.experts.config.ExpertsConfig)"),
    preset: str = typer.Option(None, "--preset", help="smoke | paper (the config file and overrides apply on top)"),
    show_config: bool = typer.Option(False, "--show-config", help="print the validated config and exit"),
) -> None:
    """Routes -> (baselines) -> refresh-repair-expand experts per route -> MOPD student -> category report.

    Re-running with the same --out skips finished phases (a killed run continues where it stopped).
    Overrides: dotted key=value after the options, e.g. experts.rounds=2 mopd.steps=4."""
    from swetrain.experts.config import load_experts_config
    from swetrain.experts.pipeline import ExpertsError, ExpertsPipeline
    from swetrain.rollout.errors import NoTrajectoryError
    from swetrain.config import ConfigError

    if config is None and preset is None:
        raise typer.BadParameter("give --config FILE and/or --preset smoke|paper", param_hint="--config")
    try:
        cfg = load_experts_config(config, preset, list(ctx.args))
    except ConfigError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None
    if show_config:
        typer.echo(cfg.to_yaml())
        return
    from swetrain.env.backend import default_sandbox
    from swetrain.env.cli import check_sandbox_or_exit
    from swetrain.policy.threads import configure_torch_threads

    check_sandbox_or_exit(default_sandbox(), [])  # the task environment runs tests, before any phase
    configure_torch_threads()
    try:
        ExpertsPipeline(cfg, out, log=lambda m: typer.echo(m, err=True)).run()
    except (ExpertsError, FileNotFoundError, NoTrajectoryError) as exc:
        typer.echo(f"error: {' '.join(str(exc).split())}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"report: {out / 'report.md'} and {out / 'report.json'}")
