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
from swetrain.label.learn import DEFAULT_C, LearnedModel, grouped_folds
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
                meta: Mapping[str, Any] | None = None) -> LearnedModel:
    evs = [from_issue_change(r) for r in labeler_inputs(rows)]
    x, _ = featurizer.transform(evs)
    return LearnedModel.fit(x, [r["labels"] for r in rows], [r["repo"] for r in rows], featurizer.names, seed=seed, c=c, meta=meta,
                            domain_classes=featurizer.domain_families)


def cross_validate(rows: Sequence[Mapping[str, Any]], k: int = 5, seed: int = 0, c: float = DEFAULT_C,
                   taxonomy: Taxonomy | None = None, featurizer: Featurizer | None = None, pool: bool = True,
                   abstain: float = 0.0, progress=None) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
    """Out-of-fold predicted rows (aligned with ``rows``) and the folds' test indices."""
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
        model = train_model([rows[i] for i in train], feat, seed=seed, c=c, meta={"fold": fi})
        labeler = Labeler(LearnedBackend(tax, model=model, featurizer=feat, pool=pool), taxonomy=tax, pool_repositories=pool, abstain=abstain)
        out = labeler.label_rows([inputs[i] for i in test])
        for i, row in zip(test, out):
            row["cv_fold"] = fi
            preds[int(i)] = row
        if progress is not None:
            progress(fi + 1, len(folds))
    return [p for p in preds if p is not None], folds
