"""``swetrain label``: audit the taxonomy, label task files, report label distributions."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import typer

label_app = typer.Typer(help="Taxonomy audit, two-stage labeling and category routing.", no_args_is_help=True)

REQUIRED = ("instance_id", "repo", "problem_statement")


def read_label_rows(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """(line, row) pairs that carry the required fields, and one error per skipped line."""
    good: list[tuple[int, dict[str, Any]]] = []
    errors: list[str] = []
    if not path.exists():
        raise typer.BadParameter(f"{path}: file does not exist")
    with path.open(encoding="utf-8") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as exc:
                errors.append(f"{path}:{line_no}: invalid JSON: {exc.msg} (column {exc.colno})")
                continue
            if not isinstance(row, dict):
                errors.append(f"{path}:{line_no}: expected a JSON object, got {type(row).__name__}")
                continue
            missing = [f for f in REQUIRED if not isinstance(row.get(f), str) or not row.get(f, "").strip()]
            if missing:
                errors.append(f"{path}:{line_no}: missing or empty required field(s) {', '.join(missing)}")
                continue
            good.append((line_no, row))
    return good, errors


@label_app.command("audit")
def audit(directory: Optional[Path] = typer.Option(None, "--dir", help="taxonomy folder (default: the packaged one)")) -> None:
    """Structural audit: counts per axis, six-field decision records, unique names, L2 under declared L1."""
    from rich.console import Console
    from rich.table import Table

    from swetrain.label.taxonomy import audit_dir

    report = audit_dir(directory)
    console = Console()
    table = Table(title=f"taxonomy audit: {report.directory}")
    table.add_column("count")
    table.add_column("value", justify="right")
    for k, v in report.counts.items():
        table.add_row(k, str(v))
    console.print(table)
    if report.violations:
        for v in report.violations:
            typer.echo(f"VIOLATION: {v}", err=True)
        typer.echo(f"audit FAILED: {len(report.violations)} violation(s)", err=True)
        raise typer.Exit(1)
    typer.echo("audit OK: every L1 names its source framework; every L2 and scale level has all six decision-record fields")


@label_app.command("tasks")
def tasks(
    in_path: Path = typer.Argument(..., help="JSONL with at least instance_id, repo, problem_statement per row"),
    out: Path = typer.Option(..., "--out", help="output JSONL (input rows + labels + route)"),
    backend: str = typer.Option("offline", "--backend", help="offline | llm"),
    no_embed: bool = typer.Option(False, "--no-embed", help="offline: decision-record signals only (no embedding model)"),
    no_pool: bool = typer.Option(False, "--no-pool", help="do not pool Domain evidence over tasks of the same repository"),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="llm: OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1"),
    model: Optional[str] = typer.Option(None, "--model", help="llm: model name"),
    workers: int = typer.Option(4, "--workers", help="llm: concurrent requests"),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="llm: reply cache folder"),
) -> None:
    """Label every valid row; rows lacking required fields are skipped and reported by line.

    The output holds every valid row (input fields kept, `labels` and `route` added). If any row was
    skipped the command still writes the others and exits with status 1.
    """
    import torch
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from swetrain.label.labeler import Labeler
    from swetrain.label.llm import LLMError

    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    good, errors = read_label_rows(in_path)
    for e in errors:
        typer.echo(f"skipped {e}", err=True)
    options: dict[str, Any] = {}
    if backend == "offline":
        options["use_embeddings"] = not no_embed
    elif backend == "llm":
        options.update(base_url=base_url, model=model, workers=workers, cache_dir=cache_dir)
    else:
        raise typer.BadParameter(f"--backend must be 'offline' or 'llm', got {backend!r}")
    try:
        labeler = Labeler(backend, pool_repositories=not no_pool, **options)
    except Exception as exc:  # noqa: BLE001 - configuration errors are reported, not raised
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    rows = [r for _, r in good]
    with Progress(TextColumn("labeling"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=False) as bar:
        task = bar.add_task("label", total=2 * len(rows))
        try:
            labeled = labeler.label_rows(rows, progress=lambda n: bar.advance(task, n))
        except LLMError as exc:  # endpoint down or never valid: say so; finished replies stay cached
            typer.echo(f"error: {exc} (nothing written to {out}; replies already received are cached, rerun to resume)", err=True)
            raise typer.Exit(1) from None
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for r in labeled:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    tmp.replace(out)
    typer.echo(f"labeled {len(labeled)} row(s) -> {out}" + (f"; skipped {len(errors)} row(s) (see above)" if errors else ""))
    if errors:
        raise typer.Exit(1)


@label_app.command("report")
def report(
    path: Path = typer.Argument(..., help="labeled JSONL written by `swetrain label tasks`"),
    markdown: bool = typer.Option(False, "--markdown", help="print Markdown tables instead of rich tables"),
    as_json: bool = typer.Option(False, "--json", help="print the distributions as JSON"),
) -> None:
    """Label distribution per axis and per route (like the paper's Table 2)."""
    from swetrain.label import report as rep

    if not path.exists():
        typer.echo(f"error: {path}: file does not exist", err=True)
        raise typer.Exit(2)
    rows = []
    for i, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if raw.strip():
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as exc:
                typer.echo(f"error: {path}:{i}: invalid JSON: {exc.msg}", err=True)
                raise typer.Exit(2) from None
            if not isinstance(row, dict):
                typer.echo(f"error: {path}:{i}: expected a JSON object, got {type(row).__name__}", err=True)
                raise typer.Exit(2)
            rows.append(row)
    unlabeled = sum(1 for r in rows if not isinstance(r.get("labels"), dict))
    if unlabeled:
        typer.echo(f"warning: {unlabeled} row(s) in {path} have no labels and are not counted", err=True)
    dist = rep.distributions(rows)
    if as_json:
        typer.echo(json.dumps(dist))
    elif markdown:
        typer.echo(rep.markdown(dist, title=path.name))
    else:
        from rich.console import Console

        console = Console()
        for t in rep.rich_tables(dist):
            console.print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(label_app, name="label")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(label_app())
