"""Training the learned labeler on the corpus and cross-validating it grouped by repository.

Every fold trains on the other folds' repositories only and labels its own rows through the same
path as ``swetrain label tasks`` (Labeler + LearnedBackend, repository pooling over the fold's
rows), so the figures describe repositories the model has not seen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from swetrain.label.adapters import from_issue_change
from swetrain.label.features import Featurizer
from swetrain.label.encoder import EncoderConfig
from swetrain.label.learn import DEFAULT_C, LearnedModel, group_key, grouped_folds
from swetrain.label.taxonomy import Taxonomy, default_taxonomy

GOLD_KEYS = ("labels", "rationale", "gold_from", "source", "origin")


def with_cards(rows: Sequence[Mapping[str, Any]], cards: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The rows with ``repo_card`` set from ``cards`` (repo lower case -> RepoCard or None; None: no cards at all)."""
    out = []
    for r in rows:
        row = {k: v for k, v in r.items() if k != "repo_card"}
        card = (cards or {}).get(str(r["repo"]).lower())
        if card is not None:
            row["repo_card"] = card.to_dict()
        out.append(row)
    return out


def labeler_inputs(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Corpus rows without their gold (what a labeler sees)."""
    return [{k: v for k, v in r.items() if k not in GOLD_KEYS} for r in rows]


def train_model(rows: Sequence[Mapping[str, Any]], featurizer: Featurizer, seed: int = 0, c: float = DEFAULT_C,
                meta: Mapping[str, Any] | None = None, encoder: EncoderConfig | None = None,
                supplement: Sequence[Mapping[str, Any]] = (), progress=None, trained_encoder: Any = None) -> LearnedModel:
    """The linear per-axis model on ``rows``; with ``encoder`` also the fine-tuned Task Type encoder,
    trained on ``rows`` plus the Task Type ``supplement`` rows (labels = ``{"task_type": ...}`` only),
    or ``trained_encoder`` when one fitted on those same rows is at hand."""
    evs = [from_issue_change(r) for r in labeler_inputs(rows)]
    x, _ = featurizer.transform(evs)
    model = LearnedModel.fit(x, [r["labels"] for r in rows], [r["repo"] for r in rows], featurizer.names, seed=seed, c=c, meta=meta,
                             domain_classes=featurizer.domain_families)
    if encoder is not None:
        from swetrain.label.encoder import encoder_inputs, train_task_encoder

        if trained_encoder is None:
            extra = [from_issue_change(r) for r in labeler_inputs(supplement)]
            pairs = [encoder_inputs(e, encoder) for e in evs + extra]
            labels = [r["labels"]["task_type"]["l1"] for r in [*rows, *supplement]]
            trained_encoder = train_task_encoder(pairs, labels, encoder, progress=progress)
        model.task_encoder = trained_encoder
        model.meta["task_encoder"] = {"rows": len(rows), "supplement_rows": len(supplement), "mix": encoder.mix,
                                      "config": model.task_encoder.meta["config"]}
    return model


def fold_supplement(supplement: Sequence[Mapping[str, Any]], test_rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The supplement rows a fold may train on: none of a repository (case-insensitive) of its test rows."""
    held = {group_key(r["repo"]) for r in test_rows}
    return [r for r in supplement if group_key(r["repo"]) not in held]


def cross_validate(rows: Sequence[Mapping[str, Any]], k: int = 5, seed: int = 0, c: float = DEFAULT_C,
                   taxonomy: Taxonomy | None = None, featurizer: Featurizer | None = None, pool: bool = True,
                   abstain: float = 0.0, progress=None, encoder: EncoderConfig | None = None,
                   supplement: Sequence[Mapping[str, Any]] = (), encoder_progress=None,
                   encoder_cache: dict[Any, Any] | None = None) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
    """Out-of-fold predicted rows (aligned with ``rows``) and the folds' test indices.

    With ``encoder`` every fold also fine-tunes the Task Type encoder on its training rows plus the
    ``supplement`` rows of repositories outside its test fold (:func:`fold_supplement`). The encoder
    reads no repository card, so runs that differ only in cards can share ``encoder_cache`` (fold
    encoders keyed by the fold's training ids)."""
    from swetrain.label.labeler import Labeler
    from swetrain.label.learned import LearnedBackend

    tax = taxonomy or default_taxonomy()
    feat = featurizer or Featurizer(tax)
    folds = grouped_folds([r["repo"] for r in rows], k, seed)
    preds: list[dict[str, Any] | None] = [None] * len(rows)
    inputs = labeler_inputs(rows)
    feat.transform([from_issue_change(r) for r in inputs])  # featurise every row once (memoised; one embedding cache entry)
    for fi, test in enumerate(folds):
        train = np.setdiff1d(np.arange(len(rows)), test)
        sup = fold_supplement(supplement, [rows[i] for i in test]) if encoder is not None else []
        share = encoder is not None and encoder_cache is not None
        key = (tuple(rows[i]["instance_id"] for i in train), len(sup), encoder) if share else None
        model = train_model([rows[i] for i in train], feat, seed=seed, c=c, meta={"fold": fi}, encoder=encoder, supplement=sup,
                            progress=encoder_progress, trained_encoder=encoder_cache.get(key) if share else None)
        if share:
            encoder_cache[key] = model.task_encoder
        labeler = Labeler(LearnedBackend(tax, model=model, featurizer=feat, pool=pool), taxonomy=tax, pool_repositories=pool, abstain=abstain)
        out = labeler.label_rows([inputs[i] for i in test])
        for i, row in zip(test, out):
            row["cv_fold"] = fi
            preds[int(i)] = row
        if progress is not None:
            progress(fi + 1, len(folds))
    return [p for p in preds if p is not None], folds
