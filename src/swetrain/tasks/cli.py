"""``swetrain tasks``: synthesize tasks from real projects, export the built-in suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

tasks_app = typer.Typer(help="Task suites: the built-in suite and synthesis from real projects.",
                        no_args_is_help=True)


@tasks_app.command("synth")
def synth_cmd(
    out: Path = typer.Option(..., "--out", help="tasks file to write (JSONL, or .parquet)"),
    pypi: Optional[str] = typer.Option(None, "--pypi", help="a pinned PyPI requirement NAME==VERSION"),
    path: Optional[Path] = typer.Option(None, "--path", help="a local source tree with its own tests"),
    max_tasks: int = typer.Option(10, "--max-tasks", min=1, help="stop after this many validated tasks"),
    seed: int = typer.Option(0, "--seed", help="orders mutation sites and statement templates"),
    workdir: Optional[Path] = typer.Option(None, "--workdir", help="where snapshots live (default: swetrain cache)"),
    max_candidates: Optional[int] = typer.Option(None, "--max-candidates", min=1, help="mutants to try at most"),
    test_path: list[str] = typer.Option([], "--test-path", help="override the test paths (repeatable)"),
    pytest_opt: list[str] = typer.Option([], "--pytest-opt", help="extra pytest option (repeatable)"),
    extra_dep: list[str] = typer.Option([], "--extra-dep", help="extra test dependency to install (repeatable)"),
    python: Optional[str] = typer.Option(None, "--python", help="with --path: run tests with this interpreter"),
    verify: bool = typer.Option(True, "--verify/--no-verify", help="final acceptance through the verifier"),
    report: Optional[Path] = typer.Option(None, "--report", help="also write the synthesis report as JSON"),
) -> None:
    """Inject bugs into a real project and keep the ones its own tests catch, as SWE tasks."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from swetrain.tasks.synth.api import default_workdir, prepare_path, prepare_pypi, synthesize
    from swetrain.tasks.synth.errors import SynthError
    from swetrain.tasks.synth.pipeline import SynthConfig

    console = Console(stderr=True)
    if (pypi is None) == (path is None):
        console.print("[red]error:[/] give exactly one of --pypi NAME==VERSION or --path DIR")
        raise typer.Exit(2)
    overrides = {"paths": test_path or None, "options": pytest_opt or None, "extra_deps": extra_dep or None}
    wd = default_workdir(workdir)
    config = SynthConfig(max_tasks=max_tasks, seed=seed, max_candidates=max_candidates, verify=verify)
    log = lambda m: console.print(f"[dim]{m}[/]")  # noqa: E731
    try:
        spec = prepare_pypi(pypi, wd, overrides, log) if pypi else prepare_path(path, wd, python, overrides, log)
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[cands]} candidates"), TimeElapsedColumn(), console=console) as bar:
            tid = bar.add_task(spec.instance_prefix, total=max_tasks, cands=0)
            tasks, rep = synthesize(spec, out, config, wd, log=log,
                                    progress=lambda kept, cands: bar.update(tid, completed=kept, cands=cands))
    except SynthError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from None
    d = rep.to_dict()
    console.print(f"wrote {len(tasks)} tasks to {out}  (candidates {rep.candidates}, kept {rep.kept}, "
                  f"rejected {d['rejected']}, flaky excluded {len(rep.flaky)}, "
                  f"{(rep.seconds_per_task or 0):.1f} s/task)")
    if report:
        report.write_text(json.dumps(d, indent=1))


@tasks_app.command("builtin")
def builtin_cmd(
    out: Path = typer.Option(..., "--out", help="tasks file to write (JSONL, or .parquet)"),
    split: Optional[str] = typer.Option(None, "--split", help="only this split (train or heldout)"),
) -> None:
    """Export the built-in suite (all splits, each row with its ``split``) with absolute sources."""
    from rich.console import Console

    from swetrain.tasks.builtin import BuiltinError, load_builtin
    from swetrain.tasks.record import save_tasks

    console = Console(stderr=True)
    try:
        tasks = load_builtin(split)
    except (BuiltinError, ValueError) as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from None
    save_tasks(tasks, out)
    counts: dict[str, int] = {}
    for t in tasks:
        counts[t.split or "?"] = counts.get(t.split or "?", 0) + 1
    console.print(f"wrote {len(tasks)} built-in tasks to {out} ({', '.join(f'{k}: {v}' for k, v in sorted(counts.items()))})")


@tasks_app.command("import")
def import_dataset(
    path: Path = typer.Argument(..., help="Export of the corpus's rows (JSONL, JSON or Parquet)."),
    dataset: str = typer.Option(..., "--dataset", help="swebench (full/Verified/Lite) | swe-gym | swe-smith | r2e-gym"),
    out: Path = typer.Option(..., "--out", help="Tasks file to write (environment=docker://IMAGE per row)."),
    check_images: bool = typer.Option(False, "--check-images", help="Say which images are missing locally (and the docker pull)."),
) -> None:
    """Turn SWE-bench-family rows into tasks for --sandbox docker (each corpus's image naming)."""
    from swetrain.tasks.datasets import DATASETS, load_dataset
    from swetrain.tasks.record import TaskLoadError, save_tasks

    if dataset not in DATASETS:
        raise typer.BadParameter(f"{dataset!r} is not one of {', '.join(DATASETS)}", param_hint="--dataset")
    try:
        tasks = load_dataset(path, dataset)
    except TaskLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    save_tasks(tasks, out)
    typer.echo(f"{len(tasks)} task(s) -> {out}")
    if check_images:
        from swetrain.env.docker_backend import DockerError, docker_preflight

        missing = 0
        for task in tasks:
            try:
                docker_preflight([task])
            except DockerError as exc:
                missing += 1
                typer.echo(str(exc), err=True)
                if "not reachable" in str(exc) or "SDK" in str(exc):
                    break
        if missing:
            raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
