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
    from swetrain.label.io import jsonl_objects

    for line_no, row, bad in jsonl_objects(path):
        if row is None:
            errors.append(str(bad))
            continue
        missing = [f for f in REQUIRED if not isinstance(row.get(f), str) or not row.get(f, "").strip()]
        if missing:
            errors.append(f"{path}:{line_no}: missing or empty required field(s) {', '.join(missing)}")
            continue
        good.append((line_no, row))
    return good, errors


@label_app.command("audit")
def audit(
    directory: Optional[Path] = typer.Option(None, "--dir", help="taxonomy folder (default: the packaged one)"),
    labels: Optional[list[Path]] = typer.Option(None, "--labels", help="also check a labels file (label tasks output or corpus); repeatable"),
) -> None:
    """Structural audit: counts per axis, six-field decision records, unique names, L2 under declared L1.

    With --labels FILE: every row of FILE against the taxonomy (unknown labels, L2 outside its L1,
    missing rationales, provenance from another taxonomy version); one line per problem, exit 1.
    """
    from rich.console import Console
    from rich.table import Table

    from swetrain.label.taxonomy import Taxonomy, TaxonomyError, audit_dir

    if labels:
        from swetrain.label.audit import audit_labels_file

        try:
            tax = Taxonomy.load(directory)
        except TaxonomyError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from None
        bad = 0
        for path in labels:
            problems = audit_labels_file(path, tax)
            for p in problems:
                typer.echo(f"VIOLATION: {p}", err=True)
            bad += len(problems)
            if not problems:
                typer.echo(f"labels OK: {path}")
        if bad:
            typer.echo(f"labels audit FAILED: {bad} problem(s)", err=True)
            raise typer.Exit(1)
        return
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
    backend: str = typer.Option("offline", "--backend", help="offline (corpus-trained classifier) | heuristic | llm"),
    no_embed: bool = typer.Option(False, "--no-embed", help="offline: rule-based decision-record signals only (no embedding model, no classifier)"),
    heuristic: bool = typer.Option(False, "--heuristic", help="offline: the rule-based signals + embeddings labeler instead of the classifier"),
    classifier: Optional[Path] = typer.Option(None, "--classifier", help="offline: model file from `swetrain label train` (default: the packaged one)"),
    abstain: float = typer.Option(0.0, "--abstain", help="route -> null (unassigned) when its confidence is below this; 0 = never"),
    no_pool: bool = typer.Option(False, "--no-pool", help="do not pool Domain evidence over tasks of the same repository"),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="llm: OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1"),
    model: Optional[str] = typer.Option(None, "--model", help="llm: model name"),
    workers: int = typer.Option(4, "--workers", help="llm: concurrent requests"),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="llm: reply cache folder"),
    prompt: str = typer.Option("full", "--prompt", help="llm: full (decision records) | compact (label names and glosses, for small models)"),
    max_tokens: int = typer.Option(400, "--max-tokens", help="llm: generation budget per request"),
    timeout: float = typer.Option(120.0, "--timeout", help="llm: seconds to wait for one reply"),
    max_retries: int = typer.Option(3, "--max-retries", help="llm: corrections asked for after an invalid answer"),
    keep_going: bool = typer.Option(False, "--keep-going", help="llm: a row without a valid answer is reported and left out (exit 1) instead of stopping the run"),
    repo_cards: Optional[list[Path]] = typer.Option(None, "--repo-cards", help="repository cards file (JSONL: repo, card[, source_path, commit]) for repositories not on disk; repeatable"),
    repo_dir: Optional[list[str]] = typer.Option(None, "--repo-dir", help="OWNER/NAME=FOLDER: build that repository's card from a folder (a checkout, a Docker image's /testbed copied out); repeatable"),
    no_cards: bool = typer.Option(False, "--no-cards", help="label without repository cards"),
    no_packaged_cards: bool = typer.Option(False, "--no-packaged-cards", help="do not fall back to the cards shipped for the corpus's repositories"),
    relabel: bool = typer.Option(False, "--relabel", help="replace labels and routes the input rows already have (default: keep them)"),
) -> None:
    """Label every valid row; rows lacking required fields are skipped and reported by line.

    Each row's repository card is built from the row's snapshot (``source`` at ``base_commit``, as in
    built-in, synthesized and imported task files), else from a --repo-dir folder, else read from the
    --repo-cards files and the packaged cards; the run says how many rows had none (they are labelled
    from the repository name, statement and change). The output holds every valid row (input fields
    kept, `labels`, `route` and `label_provenance` with the card's source and hash added). If any row
    was skipped the command still writes the others and exits with status 1.
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
    if backend in ("offline", "heuristic"):
        options["use_embeddings"] = not no_embed
        options["heuristic"] = heuristic or backend == "heuristic"
        if classifier is not None:
            options["model"] = classifier
    elif backend == "llm":
        options.update(base_url=base_url, model=model, workers=workers, cache_dir=cache_dir, prompt=prompt, max_tokens=max_tokens, timeout=timeout,
                       max_retries=max_retries)
    else:
        raise typer.BadParameter(f"--backend must be 'offline', 'heuristic' or 'llm', got {backend!r}")
    try:
        labeler = Labeler(backend, pool_repositories=not no_pool, abstain=abstain, **options)
    except Exception as exc:  # noqa: BLE001 - configuration errors are reported, not raised
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    rows = [r for _, r in good]
    store = None
    if not no_cards:
        from swetrain.label.cards import PACKAGED_CARDS, CardError, CardStore

        folders = {}
        for spec in repo_dir or []:
            if "=" not in spec:
                raise typer.BadParameter(f"--repo-dir must be OWNER/NAME=FOLDER, got {spec!r}")
            name, folder = spec.split("=", 1)
            folders[name.strip()] = Path(folder)
        files = list(repo_cards or []) + ([PACKAGED_CARDS] if not no_packaged_cards and PACKAGED_CARDS.exists() else [])
        try:
            store = CardStore(files, folders, base_dir=in_path.parent)
        except CardError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        rows = store.attach(rows)
        good = [(ln, r) for (ln, _), r in zip(good, rows)]
        for e in store.errors:
            typer.echo(f"warning: {e}", err=True)
        typer.echo(store.summary(), err=True)
    with Progress(TextColumn("labeling"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=False) as bar:
        task = bar.add_task("label", total=2 * len(rows))
        try:
            if keep_going and backend == "llm":
                labeled = []
                # one row per call, so that a row without a valid answer is left out alone;
                # `workers` rows at once, in input order
                for rows_out, error in _label_each(labeler, good, in_path, workers, bar, task):
                    labeled += rows_out
                    if error:
                        errors.append(error)
                        typer.echo(f"skipped {error}", err=True)
            else:
                labeled = labeler.label_rows(rows, progress=lambda n: bar.advance(task, n))
        except LLMError as exc:  # endpoint down or never valid: say so; finished replies stay cached
            typer.echo(f"error: {exc} (nothing written to {out}; replies already received are cached, rerun to resume)", err=True)
            raise typer.Exit(1) from None
    from swetrain.label.io import atomic_write_text

    labeled = [{k: v for k, v in r.items() if k != "repo_card"} for r in labeled]  # the card's source and hash are in the provenance
    kept = 0
    if not relabel:  # rows that came labelled (the built-in suite's routes) keep their labels
        labeled, kept = keep_existing_labels([r for _, r in good], labeled)
        if kept:
            typer.echo(f"kept the existing labels and route of {kept} row(s) (the labeler's are under "
                       "'labels_predicted'); pass --relabel to replace them", err=True)
    atomic_write_text(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in labeled))
    stats = getattr(labeler.backend, "stats", None)
    no_card = sum(1 for r in labeled if not (r.get("label_provenance") or {}).get("repo_card"))
    typer.echo(f"labeled {len(labeled)} row(s) -> {out}; {no_card} without a repository card"
               + (f"; skipped {len(errors)} row(s) (see above)" if errors else "") + (f"; llm {stats}" if stats else ""))
    if errors:
        raise typer.Exit(1)


def keep_existing_labels(inputs: list[dict], labeled: list[dict]) -> tuple[list[dict], int]:
    """Rows of ``inputs`` that already carry Domain or Task Type labels keep them and their route;
    the labeler's own labels and route go under ``labels_predicted``. Returns (rows, kept count)."""
    before = {r.get("instance_id"): r for r in inputs}
    out, kept = [], 0
    for row in labeled:
        old = before.get(row.get("instance_id")) or {}
        labels = old.get("labels") if isinstance(old.get("labels"), dict) else None
        if labels and (labels.get("domain") or labels.get("task_type")):
            row = {**row, "labels_predicted": {"labels": row.get("labels"), "route": row.get("route")},
                   "labels": labels, "route": old.get("route")}
            kept += 1
        out.append(row)
    return out, kept


def _label_each(labeler, good: list, in_path: Path, workers: int, bar, task) -> list[tuple[list[dict], str | None]]:
    """``label_rows([row])`` for each (line, row) of ``good``, ``workers`` at a time: per row, its
    labelled rows and None, or no rows and the reason it has no label."""
    from concurrent.futures import ThreadPoolExecutor

    from swetrain.label.llm import LLMError

    def one(item: tuple[int, dict]) -> tuple[list[dict], str | None]:
        line_no, row = item
        done = [0]

        def step(n: int) -> None:
            done[0] += n
            bar.advance(task, n)

        try:
            return labeler.label_rows([row], progress=step), None
        except LLMError as exc:
            bar.advance(task, 2 - done[0])
            return [], f"{in_path}:{line_no}: no label: {exc}"

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, good))


@label_app.command("report")
def report(
    path: Path = typer.Argument(..., help="labeled JSONL written by `swetrain label tasks`"),
    markdown: bool = typer.Option(False, "--markdown", help="print Markdown tables instead of rich tables"),
    as_json: bool = typer.Option(False, "--json", help="print the distributions as JSON"),
    gold: Optional[Path] = typer.Option(None, "--gold", help="gold labels (e.g. the corpus): also plot confusion matrices and the abstain curve"),
    plots: Optional[Path] = typer.Option(None, "--plots", help="folder for the PNG plots (with --gold)"),
) -> None:
    """Label distribution per axis and per route (like the paper's Table 2).

    With --gold GOLD --plots DIR: confusion matrices per axis and the abstain coverage/accuracy
    curve of PATH against GOLD, as PNG files in DIR.
    """
    from swetrain.label import report as rep

    if gold is not None:
        from swetrain.label.cli_eval import plot_against_gold

        plot_against_gold(gold, path, plots or path.parent / f"{path.stem}_plots")

    if not path.exists():
        typer.echo(f"error: {path}: file does not exist", err=True)
        raise typer.Exit(2)
    from swetrain.label.io import jsonl_objects

    rows = []
    for _, row, bad in jsonl_objects(path):
        if row is None:
            typer.echo(f"error: {bad}", err=True)
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


from swetrain.label.cli_eval import register_commands  # noqa: E402

register_commands(label_app)  # corpus, train, eval (after audit/tasks/report, as `--help` lists them)


def register(app: typer.Typer) -> None:
    app.add_typer(label_app, name="label")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(label_app())
