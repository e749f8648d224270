"""``swetrain label corpus build | train | eval``: the development corpus, the learned labeler, evaluation.

:mod:`swetrain.label.cli` adds these commands to ``swetrain label`` with :func:`register_commands`
(this module does not import it).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

import typer

corpus_app = typer.Typer(help="The labeled development corpus (ids + labels; texts joined from the shared data).", no_args_is_help=True)


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _threads() -> None:
    import torch

    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))


@corpus_app.command("build")
def corpus_build(
    inputs: Path = typer.Option(..., "--inputs", help="the rows given to the annotators (instance_id, repo, language, source, origin)"),
    pass_a: list[Path] = typer.Option(..., "--pass-a", help="pass-A annotation file(s)"),
    pass_b: list[Path] = typer.Option(..., "--pass-b", help="pass-B annotation file(s)"),
    adjudicated: Optional[Path] = typer.Option(None, "--adjudicated", help="adjudicated labels for disagreements (optional)"),
    out: Optional[Path] = typer.Option(None, "--out", help="corpus file (default: the packaged data/corpus.jsonl)"),
    agreement_out: Optional[Path] = typer.Option(None, "--agreement-out", help="agreement JSON (default: next to the corpus)"),
) -> None:
    """Assemble the corpus (final = adjudicated, else agreed, else pass A) and the per-axis agreement of the passes."""
    from swetrain.label.corpus import CORPUS_PATH, CorpusError, build_corpus

    out = out or CORPUS_PATH
    agreement_out = agreement_out or out.with_name("agreement.json")
    try:
        summary = build_corpus(inputs, pass_a, pass_b, adjudicated, out, agreement_out)
    except CorpusError as exc:
        _fail(str(exc))
    typer.echo(f"corpus: {summary['rows']} rows, {summary['repos']} repositories, {len(summary['languages'])} languages -> {out}")
    typer.echo(f"final labels from: {summary['gold_from']}" + ("" if summary["adjudicated_file"] else " (no adjudicated file: disagreements take pass A)"))
    typer.echo(f"agreement of the two passes over {summary['double_labeled']} rows -> {agreement_out}")
    for axis, a in summary["agreement"].items():
        kappa = "n/a" if a["kappa"] is None else f"{a['kappa']:.3f}"
        typer.echo(f"  {axis:20s} agreement {100 * (a['agreement'] or 0):5.1f}%  kappa {kappa}")


@corpus_app.command("check")
def corpus_check(
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="corpus file (default: the packaged one)"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="shared data folder (default: $SWETRAIN_SHARED_DATA or ../shared/data)"),
) -> None:
    """Read the corpus, check every row against the taxonomy and join the issue texts."""
    from swetrain.label.corpus import CorpusError, load_corpus

    try:
        rows = load_corpus(corpus, data_dir)
    except CorpusError as exc:
        _fail(str(exc))
    typer.echo(f"corpus OK: {len(rows)} rows, {len({r['repo'].lower() for r in rows})} repositories, every text found")


@corpus_app.command("export")
def corpus_export(
    out: Path = typer.Option(..., "--out", help="JSONL of labeler inputs (instance_id, repo, problem_statement, patch, repo_language)"),
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="corpus file (default: the packaged one)"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="shared data folder with the issue texts"),
    sample: int = typer.Option(0, "--sample", help="keep this many rows (0 = all), one per repository first, chosen with --seed"),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Write the corpus rows with their joined texts and WITHOUT gold labels (input for `label tasks`)."""
    import random

    from swetrain.label.crossval import labeler_inputs
    from swetrain.label.io import atomic_write_text

    rows = labeler_inputs(_load(corpus, data_dir))
    if sample and sample < len(rows):
        order = list(range(len(rows)))
        random.Random(seed).shuffle(order)
        seen: set[str] = set()
        first: list[int] = []
        for i in order:
            if rows[i]["repo"].lower() not in seen:
                seen.add(rows[i]["repo"].lower())
                first.append(i)
        picked = (first + [i for i in order if i not in set(first)])[:sample]
        rows = [rows[i] for i in sorted(picked)]
    atomic_write_text(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    typer.echo(f"exported {len(rows)} row(s) without labels -> {out}")


def _load(corpus: Optional[Path], data_dir: Optional[Path]) -> list[dict[str, Any]]:
    from swetrain.label.corpus import CorpusError, load_corpus

    try:
        return load_corpus(corpus, data_dir)
    except CorpusError as exc:
        _fail(str(exc))
        raise  # unreachable


def _cards(repo_cards: Optional[list[Path]], no_cards: bool):
    """repo (lower case) -> card from the cards files (default: the packaged corpus cards), or None with --no-cards."""
    if no_cards:
        return None
    from swetrain.label.cards import PACKAGED_CARDS, CardError, read_cards_file

    out: dict = {}
    try:
        for path in reversed(list(repo_cards or [PACKAGED_CARDS])):  # the first file wins
            out.update(read_cards_file(path))
    except CardError as exc:
        _fail(str(exc))
    return out


def _encoder_setup(task_encoder: bool, supplement: Optional[Path], no_supplement: bool, epochs: Optional[int], data_dir: Optional[Path],
                   members: Optional[int] = None):
    """(EncoderConfig or None, the Task Type supplement rows) from the --task-encoder options."""
    if not task_encoder:
        if supplement is not None or no_supplement or epochs is not None or members is not None:
            _fail("--supplement / --no-supplement / --encoder-epochs / --encoder-members need --task-encoder")
        return None, []
    from swetrain.label.corpus import CorpusError, load_supplement
    from swetrain.label.encoder import EncoderConfig

    if epochs is not None and epochs < 1:
        _fail(f"--encoder-epochs must be at least 1, got {epochs}")
    if members is not None and members < 1:
        _fail(f"--encoder-members must be at least 1, got {members}")
    config = EncoderConfig()
    config = replace(config, epochs=epochs if epochs is not None else config.epochs, members=members if members is not None else config.members)
    if no_supplement:
        return config, []
    try:
        rows = load_supplement(supplement, data_dir)
    except CorpusError as exc:
        _fail(str(exc))
        raise  # unreachable
    typer.echo(f"Task Type encoder: {len(rows)} supplement rows from {supplement or 'the packaged task_type_supplement.jsonl'}", err=True)
    return config, rows


class _EncoderBar:
    """A rich progress bar over the encoder's training steps (one task per fit)."""

    def __init__(self, label: str):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.label = label
        # on stderr: stdout carries --json output
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=Console(stderr=True))
        self.task = None
        self.fits = 0

    def __call__(self, step: int, total: int) -> None:
        if step == 1:
            self.fits += 1
            self.task = self.bar.add_task(f"{self.label} {self.fits}", total=total)
        self.bar.update(self.task, completed=step)

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)


_MEMBERS_HELP = "--task-encoder: fine-tune this many seeds and average them (default: EncoderConfig.members)"
_TASK_ENCODER_HELP = "also fine-tune the Task Type encoder (MiniLM, minutes on CPU) and mix its L1 probabilities in (docs/labels.md)"


def _featurizer():
    from swetrain.label.embed import EmbeddingUnavailable
    from swetrain.label.features import Featurizer
    from swetrain.label.taxonomy import default_taxonomy
    from swetrain.paths import cache_dir

    feat = Featurizer(default_taxonomy(), cache_dir=cache_dir("label", "features"))
    try:
        _ = feat.offline.embedder
    except EmbeddingUnavailable as exc:
        _fail(str(exc))
    return feat


def train(
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="corpus file (default: the packaged one)"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="shared data folder with the issue texts"),
    out: Optional[Path] = typer.Option(None, "--out", help="model file (default: the packaged data/model.npz)"),
    seed: int = typer.Option(0, "--seed"),
    c: Optional[float] = typer.Option(None, "--C", help="inverse L2 strength of the logistic regressions"),
    repo_cards: Optional[list[Path]] = typer.Option(None, "--repo-cards", help="repository cards file(s) (default: the packaged cards of the corpus's repositories)"),
    no_cards: bool = typer.Option(False, "--no-cards", help="train without repository cards (no card model)"),
    task_encoder: bool = typer.Option(False, "--task-encoder", help=_TASK_ENCODER_HELP),
    supplement: Optional[Path] = typer.Option(None, "--supplement", help="--task-encoder: Task Type supplement file (default: the packaged one)"),
    no_supplement: bool = typer.Option(False, "--no-supplement", help="--task-encoder: train the encoder on the corpus only"),
    encoder_epochs: Optional[int] = typer.Option(None, "--encoder-epochs", help="--task-encoder: fine-tuning epochs (default 3)"),
    encoder_members: Optional[int] = typer.Option(None, "--encoder-members", help=_MEMBERS_HELP),
) -> None:
    """Train the per-axis calibrated classifiers (and the Domain card model) on the whole corpus (deterministic from --seed)."""
    from swetrain.label.corpus import corpus_hash
    from swetrain.label.crossval import train_model
    from swetrain.label.learn import DEFAULT_C, DEFAULT_MODEL_PATH
    from swetrain.label.provenance import taxonomy_hash
    from swetrain.label.taxonomy import default_taxonomy

    from swetrain.label.crossval import with_cards

    _threads()
    rows = _load(corpus, data_dir)
    cards = _cards(repo_cards, no_cards)
    rows = with_cards(rows, cards)
    typer.echo(f"{sum('repo_card' in r for r in rows)} of {len(rows)} corpus rows have a repository card", err=True)
    enc_config, sup_rows = _encoder_setup(task_encoder, supplement, no_supplement, encoder_epochs, data_dir, encoder_members)
    feat = _featurizer()
    with _EncoderBar("fine-tune Task Type encoder") as bar:
        model = train_model(rows, feat, seed=seed, c=c or DEFAULT_C,
                            meta={"corpus_sha256": corpus_hash(corpus), "taxonomy_sha256": taxonomy_hash(default_taxonomy())},
                            encoder=enc_config, supplement=sup_rows, progress=bar)
    out = out or DEFAULT_MODEL_PATH
    model.save(out)
    enc = model.meta.get("task_encoder")
    extra = f" + Task Type encoder on {enc['rows'] + enc['supplement_rows']} rows ({enc['supplement_rows']} from the supplement)" if enc else ""
    typer.echo(f"trained on {len(rows)} rows ({model.meta['repos']} repositories){extra}, seed {seed}, digest {model.digest()} -> {out}")


def _print_result(result: dict[str, Any], as_json: bool, matrices: bool) -> None:
    if as_json:
        typer.echo(json.dumps(result))
        return
    from rich.console import Console

    from swetrain.label.evalreport import rich_tables

    console = Console(width=200)
    for t in rich_tables(result, matrices=matrices):
        console.print(t)


def evaluate_cmd(
    gold: Optional[Path] = typer.Argument(None, help="gold labels JSONL (instance_id + labels), e.g. the corpus"),
    pred: Optional[Path] = typer.Argument(None, help="predicted labels JSONL (output of `label tasks`)"),
    cv: bool = typer.Option(False, "--cv", help="grouped-by-repository cross-validation of the learned labeler on the corpus"),
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="--cv: corpus file (default: the packaged one)"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="--cv: shared data folder with the issue texts"),
    folds: int = typer.Option(5, "--folds"),
    seed: int = typer.Option(0, "--seed"),
    c: Optional[float] = typer.Option(None, "--C"),
    no_pool: bool = typer.Option(False, "--no-pool", help="--cv: no repository pooling of Domain"),
    out_dir: Optional[Path] = typer.Option(None, "--out-dir", help="--cv: write predictions, metrics and plots here"),
    as_json: bool = typer.Option(False, "--json", help="print the metrics as one JSON object"),
    no_matrices: bool = typer.Option(False, "--no-matrices", help="only the per-axis table"),
    cards: str = typer.Option("both", "--cards", help="--cv: with | without | both (with and without repository cards, side by side)"),
    repo_cards: Optional[list[Path]] = typer.Option(None, "--repo-cards", help="--cv: cards file(s) (default: the packaged cards of the corpus's repositories)"),
    task_encoder: bool = typer.Option(False, "--task-encoder", help="--cv: " + _TASK_ENCODER_HELP + "; every fold fine-tunes its own"),
    supplement: Optional[Path] = typer.Option(None, "--supplement", help="--cv --task-encoder: Task Type supplement file (default: the packaged one)"),
    no_supplement: bool = typer.Option(False, "--no-supplement", help="--cv --task-encoder: train the encoders on the corpus folds only"),
    encoder_epochs: Optional[int] = typer.Option(None, "--encoder-epochs", help="--cv --task-encoder: fine-tuning epochs (default 3)"),
    encoder_members: Optional[int] = typer.Option(None, "--encoder-members", help="--cv " + _MEMBERS_HELP),
) -> None:
    """Per-axis accuracy, macro-F1 and confusion matrices of PRED against GOLD, or of grouped CV (--cv).

    --cv runs the grouped-by-repository cross-validation with and without repository cards (--cards)
    and prints the per-axis figures of both, the per-class recall of Task Type L1 and route, and the
    confusion matrices of each run."""
    from swetrain.label.evalreport import align, read_rows
    from swetrain.label.metrics import evaluate

    if cv:
        from swetrain.label.crossval import cross_validate
        from swetrain.label.learn import DEFAULT_C
        from swetrain.label.taxonomy import default_taxonomy

        from swetrain.label.crossval import with_cards
        from swetrain.label.evalreport import per_class_recall

        if cards not in ("with", "without", "both"):
            _fail(f"--cards must be with, without or both, got {cards!r}")
        _threads()
        rows = _load(corpus, data_dir)
        table = _cards(repo_cards, False)
        enc_config, sup_rows = _encoder_setup(task_encoder, supplement, no_supplement, encoder_epochs, data_dir, encoder_members)
        feat = _featurizer()
        runs: dict[str, Any] = {}
        encoder_cache: dict[Any, Any] = {}  # the encoder reads no card: both card variants share each fold's
        for variant in (["with", "without"] if cards == "both" else [cards]):
            inputs = with_cards(rows, table if variant == "with" else None)
            n_card = sum("repo_card" in r for r in inputs)
            typer.echo(f"cv {variant} repository cards: {n_card} of {len(inputs)} rows have a card, {len(inputs) - n_card} without", err=True)
            with _EncoderBar("fine-tune Task Type encoder, fold") as bar:
                preds, fold_idx = cross_validate(inputs, k=folds, seed=seed, c=c or DEFAULT_C, taxonomy=default_taxonomy(), featurizer=feat,
                                                 pool=not no_pool, progress=lambda i, n: typer.echo(f"fold {i}/{n} done", err=True),
                                                 encoder=enc_config, supplement=sup_rows, encoder_progress=bar, encoder_cache=encoder_cache)
            result = evaluate(rows, preds)
            result["per_class_recall"] = {ax: per_class_recall(result["axes"][ax]["confusion"]) for ax in ("task_type.l1", "domain.l1", "route")}
            result["cv"] = {"folds": folds, "seed": seed, "C": c or DEFAULT_C, "pool": not no_pool, "cards": variant,
                            "rows_with_card": n_card, "rows_without_card": len(inputs) - n_card,
                            "fold_rows": [len(f) for f in fold_idx], "repos": len({r["repo"].lower() for r in rows}),
                            "task_encoder": None if enc_config is None else {"supplement_rows": len(sup_rows), "mix": enc_config.mix,
                                                                             "epochs": enc_config.epochs, "members": enc_config.members}}
            runs[variant] = (result, preds)
        if out_dir is not None:
            from swetrain.label.evalreport import plot_confusions, plot_coverage
            from swetrain.label.io import atomic_write_text

            for variant, (result, preds) in runs.items():
                tag = "" if len(runs) == 1 else f"_{variant}_cards"
                atomic_write_text(out_dir / f"cv_predictions{tag}.jsonl", "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in preds))
                atomic_write_text(out_dir / f"cv_metrics{tag}.json", json.dumps(result, indent=1) + "\n")
                plot_confusions(result, out_dir / f"plots{tag}")
                plot_coverage(result, out_dir / f"plots{tag}")
        if len(runs) == 1:
            _print_result(next(iter(runs.values()))[0], as_json, not no_matrices)
            return
        results = {f"{v}_cards": r for v, (r, _) in runs.items()}
        if as_json:
            typer.echo(json.dumps(results))
            return
        from rich.console import Console

        from swetrain.label.evalreport import cards_comparison_table, recall_table, rich_tables

        console = Console(width=200)
        console.print(cards_comparison_table(results["with_cards"], results["without_cards"]))
        console.print(recall_table(results["with_cards"], results["without_cards"]))
        for variant, result in results.items():
            if not no_matrices:
                console.print(f"[bold]{variant.replace('_', ' ')}[/bold]")
                for t in rich_tables(result, matrices=True)[1:]:
                    console.print(t)
        return
    if gold is None or pred is None:
        _fail("give GOLD and PRED files, or --cv")
    try:
        g_rows, p_rows = read_rows(gold, "gold"), read_rows(pred, "prediction")
    except ValueError as exc:
        _fail(str(exc))
    g, p, missing = align(g_rows, p_rows)
    if not g:
        _fail(f"no instance_id of {pred} is in {gold}")
    result = evaluate(g, p)
    result["unpredicted_gold_rows"] = missing
    if missing:
        typer.echo(f"note: {missing} gold row(s) have no prediction and are not counted", err=True)
    _print_result(result, as_json, not no_matrices)


def plot_against_gold(gold: Path, pred: Path, folder: Path) -> None:
    from swetrain.label.evalreport import align, plot_confusions, plot_coverage, read_rows
    from swetrain.label.metrics import evaluate

    try:
        g, p, _ = align(read_rows(gold, "gold"), read_rows(pred, "prediction"))
    except ValueError as exc:
        _fail(str(exc))
    if not g:
        _fail(f"no instance_id of {pred} is in {gold}")
    result = evaluate(g, p)
    paths = plot_confusions(result, folder)
    curve = plot_coverage(result, folder)
    typer.echo(f"plots: {len(paths)} confusion matrices" + (", abstain curve" if curve else "") + f" -> {folder}")


def register_commands(label_app: typer.Typer) -> None:
    """Add ``corpus build|check|export``, ``train`` and ``eval`` to ``label_app`` (``swetrain label``)."""
    label_app.add_typer(corpus_app, name="corpus")
    label_app.command("train")(train)
    label_app.command("eval")(evaluate_cmd)
