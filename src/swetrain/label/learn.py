"""The learned offline labeler: one calibrated linear classifier per axis, trained on the corpus.

Training (scikit-learn): features are standardised; per axis a multinomial logistic regression
(L2, ``C``) is fitted; its softmax temperature is then fitted on out-of-fold logits of an inner
cross-validation grouped by repository (so confidences describe unseen repositories), which is
the calibration step. The fitted model is plain arrays (standardiser, weights, biases,
temperatures), saved as ``.npz`` and applied with numpy only.

Prediction is hierarchical: Task Type L1 and Domain L1 are chosen first; L2 is the most probable
trained child of that L1 (probabilities renormalised over its children), or the rule-based stage-2
pick when no child of that L1 was seen in training. Domain describes the repository, so Domain
L1/L2 probabilities are pooled over the input rows of the same repository:
``p = (p_own + w * mean_repo(p)) / (1 + w)``. The route is the one with the largest summed
(pooled) Domain L1 probability, and Domain L1 is the most probable L1 of that route, so the route
always follows Domain L1. Each axis reads its own subset of the embedding blocks
(``AXIS_EXCLUDE``): Domain the 96-token statement and change embeddings, the other axes the title
and 256-token issue embeddings (chosen by grouped CV, docs/labels.md). Everything is
deterministic given the seed.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from swetrain.label.metrics import axis_value
from swetrain.label.weighting import sqrt_class_weights
from swetrain.label.routing import route_of

MODEL_VERSION = "learned-v3"
TRAIN_AXES: tuple[str, ...] = ("task_type.l1", "task_type.l2", "domain.l1", "domain.l2", "scope", "complexity", "time",
                               "task_spec_type", "dependency_context")
DEFAULT_C = 0.01
# per-axis class weights (scikit-learn ``class_weight``, or "sqrt": (n / (k * n_class)) ** 0.5, half way to balanced).
# "balanced" on Domain was measured and not adopted: +2.7 points Domain L1 but -1.9 route and worse confidence ranking
# in grouped CV; "sqrt" on Task Type L1: +1.5 points over three fold seeds on the 450-row corpus (balanced: -0.9),
# more security-fix / feature rows found (docs/labels.md, lever tables)
CLASS_WEIGHT: dict[str, str | None] = {"task_type.l1": "sqrt"}
# feature-name prefixes each axis does not read (the rest: signal scores, diff structure, rules, language)
# the Domain L1 card model's channels, one value per family each (features.Featurizer computes them);
# card_zs_sent (feat-v5, the card's best single sentence): +2.2 Domain L1 / +2.0 route in grouped CV (seed 0), +0.8 / +0.5
# over five fold seeds (docs/labels.md)
CARD_CHANNELS: tuple[str, ...] = ("card_zs_rule", "card_zs_head", "card_sig", "card_zs_sent")
_CARD_PREFIXES = ("card.", *(f"{ch}." for ch in CARD_CHANNELS))  # read by the card model only
_DOMAIN_EXCLUDE = ("emb_title.", "emb_issue.", *_CARD_PREFIXES)
_OTHER_EXCLUDE = ("emb_statement.", "emb_change.", *_CARD_PREFIXES)
AXIS_EXCLUDE: dict[str, tuple[str, ...]] = {ax: _DOMAIN_EXCLUDE if ax.startswith("domain.") else _OTHER_EXCLUDE for ax in TRAIN_AXES}
ROUTES: tuple[str | None, ...] = ("A", "B", "C", None)  # None: docs_knowledge / non_coding / other (unassigned)
POOL_WEIGHT = 2.0
POOLED_AXES: tuple[str, ...] = ("domain.l1", "domain.l2")  # Domain describes the repository
DEFAULT_MODEL_PATH = Path(__file__).with_name("data") / "model.npz"


class ModelError(ValueError):
    """A model file is missing, unreadable or does not fit the features / taxonomy."""


# ---- grouped splitting --------------------------------------------------------------------------
def group_key(repo: str) -> str:
    return repo.strip().lower()


def grouped_folds(repos: Sequence[str], k: int = 5, seed: int = 0) -> list[np.ndarray]:
    """k test-index arrays; every repository (case-insensitive) is in exactly one fold.

    Repositories are shuffled with ``seed`` and assigned, largest first, to the fold with the
    fewest rows, so folds have similar sizes.
    """
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(repos):
        groups.setdefault(group_key(r), []).append(i)
    names = sorted(groups)
    random.Random(seed).shuffle(names)
    names.sort(key=lambda g: -len(groups[g]))  # stable: ties keep the shuffled order
    k = max(1, min(k, len(names)))
    folds: list[list[int]] = [[] for _ in range(k)]
    for g in names:
        j = min(range(k), key=lambda f: (len(folds[f]), f))
        folds[j].extend(groups[g])
    return [np.array(sorted(f), dtype=int) for f in folds]


# ---- one axis -------------------------------------------------------------------------------
@dataclass
class AxisModel:
    classes: list[str]
    coef: np.ndarray  # (d, k)
    intercept: np.ndarray  # (k,)
    temperature: float = 1.0
    columns: np.ndarray | None = None  # feature columns this axis reads (None: all)

    def logits(self, x: np.ndarray) -> np.ndarray:
        if self.columns is not None:
            x = x[:, self.columns]
        return x @ self.coef + self.intercept

    def proba(self, x: np.ndarray) -> np.ndarray:
        z = self.logits(x) / self.temperature
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)


def mix_task_type(p_linear: np.ndarray, linear_classes: Sequence[str], p_encoder: np.ndarray, encoder_classes: Sequence[str],
                  weight: float) -> np.ndarray:
    """``(1 - a) * p_linear + a * p_encoder`` over the linear model's classes (issue 33, docs/labels.md).

    The encoder's probability of a class the linear model does not know is dropped and each row is
    renormalised; a linear class the encoder does not know gets 0 from the encoder.
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"mix weight must be in [0, 1], got {weight}")
    enc = np.zeros_like(p_linear, dtype=np.float64)
    col = {k: j for j, k in enumerate(encoder_classes)}
    for i, k in enumerate(linear_classes):
        if k in col:
            enc[:, i] = p_encoder[:, col[k]]
    enc /= np.maximum(enc.sum(axis=1, keepdims=True), 1e-12)
    return (1.0 - weight) * p_linear + weight * enc


def _fit_linear(x: np.ndarray, y: Sequence[str], c: float, seed: int, class_weight: str | None = None) -> AxisModel:
    classes = sorted(set(y))
    if len(classes) == 1:  # degenerate: always that class
        return AxisModel(classes, np.zeros((x.shape[1], 1), dtype=np.float32), np.zeros(1, dtype=np.float32))
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    weights: Any = class_weight
    if class_weight == "sqrt":
        weights = dict(zip(classes, sqrt_class_weights(y, classes)))
    clf = LogisticRegression(C=c, max_iter=500, tol=1e-3, random_state=seed, class_weight=weights)
    with threadpool_limits(1):  # BLAS threads oversubscribe a busy 2-core machine (25x slower)
        clf.fit(x, y)
    coef = clf.coef_.T.astype(np.float64)
    inter = clf.intercept_.astype(np.float64)
    if len(clf.classes_) == 2:  # binary: sklearn keeps one column; make it a 2-way softmax
        coef = np.concatenate([-coef / 2, coef / 2], axis=1)
        inter = np.array([-inter[0] / 2, inter[0] / 2])
    return AxisModel([str(k) for k in clf.classes_], coef, inter)


def repo_groups(repos: Sequence[str]) -> list[list[int]]:
    """Row indices per repository (case-insensitive), in first-seen order."""
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(repos):
        groups.setdefault(group_key(r), []).append(i)
    return list(groups.values())


def pool_rows(p: np.ndarray, groups: Sequence[Sequence[int]], weight: float = POOL_WEIGHT) -> np.ndarray:
    """``(p_own + w * mean_repo p) / (1 + w)`` for every repository with more than one row."""
    out = p.copy()
    for idx in groups:
        if len(idx) > 1:
            out[idx] = (p[idx] + weight * p[idx].mean(axis=0)) / (1 + weight)
    return out


def _fit_temperature(logits: np.ndarray, classes: list[str], y: Sequence[str], groups: Sequence[Sequence[int]] | None = None) -> float:
    """The softmax temperature minimising the negative log-likelihood of out-of-fold logits.

    With ``groups`` the probabilities are repository-pooled first (as at prediction time), so the
    temperature calibrates the pooled probabilities.
    """
    idx = {k: i for i, k in enumerate(classes)}
    rows = [i for i, v in enumerate(y) if v in idx]
    if not rows:
        return 1.0
    t_idx = np.array([idx[y[i]] for i in rows])
    best_t, best_nll = 1.0, float("inf")
    for t in np.exp(np.linspace(np.log(0.05), np.log(20.0), 80)):
        zz = logits / t
        zz = zz - zz.max(axis=1, keepdims=True)
        p = np.exp(zz)
        p /= p.sum(axis=1, keepdims=True)
        if groups is not None:
            p = pool_rows(p, groups)
        nll = -float(np.log(np.maximum(p[rows, t_idx], 1e-300)).mean())
        if nll < best_nll - 1e-9:
            best_t, best_nll = float(t), nll
    return best_t


def fit_axis(x: np.ndarray, y: Sequence[str], repos: Sequence[str], c: float, seed: int, calib_folds: int = 3,
             class_weight: str | None = None, pooled: bool = False) -> AxisModel:
    """Fit on all rows, then the temperature on out-of-fold logits of a grouped inner split
    (repository-pooled first when ``pooled``: the Domain axes are pooled at prediction time)."""
    model = _fit_linear(x, y, c, seed, class_weight)
    if len(model.classes) < 2:
        return model
    oof = np.zeros((len(y), len(model.classes)))
    col = {k: i for i, k in enumerate(model.classes)}
    for test in grouped_folds(repos, calib_folds, seed + 1):
        train = np.setdiff1d(np.arange(len(y)), test)
        if len({y[i] for i in train}) < 2:
            continue
        inner = _fit_linear(x[train], [y[i] for i in train], c, seed, class_weight)
        z = inner.logits(x[test])
        fill = np.full((len(test), len(model.classes)), -30.0)
        for j, k in enumerate(inner.classes):
            fill[:, col[k]] = z[:, j]
        oof[test] = fill
    model.temperature = _fit_temperature(oof, model.classes, y, repo_groups(repos) if pooled else None)
    return model


def _route_or_none(domain_l1: str) -> str | None:
    try:
        return route_of(domain_l1)
    except ValueError:
        return None


def axis_columns(feature_names: Sequence[str], axis: str) -> np.ndarray:
    """Indices of the features ``axis`` reads (all but the prefixes in ``AXIS_EXCLUDE[axis]``)."""
    skip = AXIS_EXCLUDE.get(axis, ())
    return np.array([i for i, n in enumerate(feature_names) if not n.startswith(skip)], dtype=np.int64)


# ---- Domain L1 from the repository card ---------------------------------------------------------
CARD_L2 = 1e-3


@dataclass
class CardDomainModel:
    """Domain L1 of rows that have a repository card: a conditional logit over the 21 families.

    Every family f gets the same kind of evidence (``CARD_CHANNELS``: the card's similarity to f's
    decision records, to f's label prototypes, f's decision-record signal score with the card as
    metadata, the best similarity of any one sentence of the card to f's decision records) plus the
    log training frequency of f; one weight per channel, shared by all families
    (``score_f = sum_c w_c * standardised channel_c(f)``), fitted by multinomial NLL with a small L2
    penalty. Sharing the weights lets a family with few (or no) training rows be predicted from its
    decision records; the log-frequency weight learns how much the corpus's label mix counts.
    """

    classes: list[str]
    columns: np.ndarray  # (channels, classes) feature indices
    mean: np.ndarray  # (channels + 1,)
    scale: np.ndarray
    weights: np.ndarray
    log_prior: np.ndarray  # (classes,)
    has_column: int = -1

    def channels(self, x: np.ndarray) -> np.ndarray:
        """(n, classes, channels + 1): raw channels and the log prior (unstandardised)."""
        ch = np.stack([x[:, cols] for cols in self.columns], axis=2)
        prior = np.broadcast_to(self.log_prior[None, :, None], (x.shape[0], len(self.classes), 1))
        return np.concatenate([ch, prior], axis=2)

    def proba(self, x: np.ndarray) -> np.ndarray:
        f = (self.channels(x) - self.mean) / self.scale
        z = f @ self.weights
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def has_card(self, x: np.ndarray) -> np.ndarray:
        return x[:, self.has_column] > 0.5

    @classmethod
    def fit(cls, x: np.ndarray, y: Sequence[str], feature_names: Sequence[str], classes: Sequence[str], l2: float = CARD_L2) -> CardDomainModel | None:
        """Fit on the rows that have a card (raw, unstandardised features); None without card columns or rows."""
        from scipy.optimize import minimize

        index = {n: i for i, n in enumerate(feature_names)}
        if "card.has" not in index or any(f"{ch}.{c}" not in index for ch in CARD_CHANNELS for c in classes):
            return None
        has_col = index["card.has"]
        rows = np.flatnonzero(x[:, has_col] > 0.5)
        if len(rows) < 10:
            return None
        classes = list(classes)
        cidx = {c: i for i, c in enumerate(classes)}
        counts = np.array([sum(1 for v in y if v == c) for c in classes], dtype=np.float64) + 0.5
        model = cls(classes, np.array([[index[f"{ch}.{c}"] for c in classes] for ch in CARD_CHANNELS]),
                    np.zeros(len(CARD_CHANNELS) + 1), np.ones(len(CARD_CHANNELS) + 1), np.zeros(len(CARD_CHANNELS) + 1),
                    np.log(counts / counts.sum()), has_col)
        f = model.channels(x[rows])
        model.mean = f.reshape(-1, f.shape[2]).mean(axis=0)
        model.scale = f.reshape(-1, f.shape[2]).std(axis=0) + 1e-9
        f = (f - model.mean) / model.scale
        target = np.array([cidx[y[i]] for i in rows])
        n = np.arange(len(rows))

        def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
            z = f @ w
            z = z - z.max(axis=1, keepdims=True)
            lse = np.log(np.exp(z).sum(axis=1))
            p = np.exp(z - lse[:, None])
            nll = -float((z[n, target] - lse).mean())
            grad = -(f[n, target] - (p[:, :, None] * f).sum(axis=1)).mean(axis=0)
            return nll + l2 * float(w @ w), grad + 2 * l2 * w

        model.weights = minimize(loss, np.zeros(f.shape[2]), jac=True, method="L-BFGS-B").x
        return model


# ---- the model ------------------------------------------------------------------------------
def encoder_folder(model_path: str | Path) -> Path:
    """Where a model file's fine-tuned Task Type encoder is stored: ``<model stem>.task_encoder/`` beside it."""
    p = Path(model_path)
    return p.with_name(p.stem + ".task_encoder")


@dataclass
class LearnedModel:
    feature_names: list[str]
    mean: np.ndarray
    scale: np.ndarray
    axes: dict[str, AxisModel]
    meta: dict[str, Any] = field(default_factory=dict)
    card: CardDomainModel | None = None  # Domain L1 of rows with a repository card
    task_encoder: Any = None  # a fitted swetrain.label.encoder.TaskTypeEncoder (Task Type L1), or None

    @classmethod
    def fit(cls, x: np.ndarray, labels: Sequence[Mapping[str, Any]], repos: Sequence[str], feature_names: list[str],
            seed: int = 0, c: float = DEFAULT_C, meta: Mapping[str, Any] | None = None,
            domain_classes: Sequence[str] | None = None) -> LearnedModel:
        mean = x.mean(axis=0)
        scale = x.std(axis=0)
        scale[scale < 1e-6] = 1.0
        xs = (x - mean) / scale
        axes = {}
        for ax in TRAIN_AXES:
            cols = axis_columns(feature_names, ax)
            axes[ax] = fit_axis(xs[:, cols], [axis_value(lb, ax) for lb in labels], repos, c, seed, class_weight=CLASS_WEIGHT.get(ax),
                                pooled=ax in POOLED_AXES)
            axes[ax].columns = cols
        card = None
        if domain_classes:
            card = CardDomainModel.fit(x, [axis_value(lb, "domain.l1") for lb in labels], feature_names, domain_classes)
        info = {"version": MODEL_VERSION, "seed": seed, "C": c, "card_model": "conditional logit over card channels" if card else None,
                "card_rows": int((x[:, card.has_column] > 0.5).sum()) if card else 0, "class_weight": {k: v for k, v in CLASS_WEIGHT.items() if v},
                "route": "summed Domain L1 probability", "axis_exclude": {ax: list(AXIS_EXCLUDE.get(ax, ())) for ax in TRAIN_AXES}, "rows": len(labels), "repos": len({group_key(r) for r in repos}),
                **(dict(meta) if meta else {})}
        return cls(list(feature_names), mean, scale, axes, info, card)

    def digest(self) -> str:
        h = hashlib.sha256()
        for arr in (self.mean, self.scale, *[a.coef for a in self.axes.values()]):
            h.update(np.ascontiguousarray(arr, dtype=np.float32).tobytes())
        for a in self.axes.values():
            if a.columns is not None:
                h.update(np.ascontiguousarray(a.columns, dtype=np.int64).tobytes())
        if self.card is not None:
            h.update(np.ascontiguousarray(self.card.weights, dtype=np.float32).tobytes())
        if self.task_encoder is not None:
            h.update(self.task_encoder.digest().encode())
        return h.hexdigest()[:16]

    def classes(self, axis: str) -> list[str]:
        """The classes of ``axis`` in :meth:`probabilities` (Domain L1: every family the card model knows)."""
        if axis == "domain.l1" and self.card is not None:
            return self.card.classes
        return self.axes[axis].classes

    # ---- prediction ---------------------------------------------------------------------------
    def probabilities(self, x: np.ndarray, repos: Sequence[str] | None = None, pool: bool = True,
                      task_type_proba: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Per axis (n, classes) probabilities; ``task_type_proba``: the Task Type encoder's L1
        probabilities for these rows (``task_encoder.classes`` order), mixed in by :func:`mix_task_type`."""
        if x.shape[1] != len(self.feature_names):
            raise ModelError(f"model expects {len(self.feature_names)} features, got {x.shape[1]} (retrain it: `swetrain label train`)")
        xs = (x - self.mean) / self.scale
        probs = {ax: m.proba(xs) for ax, m in self.axes.items()}
        if task_type_proba is not None:
            if self.task_encoder is None:
                raise ModelError("Task Type encoder probabilities given to a model without a Task Type encoder")
            probs["task_type.l1"] = mix_task_type(probs["task_type.l1"], self.axes["task_type.l1"].classes, task_type_proba,
                                                  self.task_encoder.classes, self.task_encoder.config.mix)
        if self.card is not None:  # Domain L1 over all families: the card model where the row has a card, else the classifier
            lr = probs["domain.l1"]
            full = np.zeros((x.shape[0], len(self.card.classes)))
            col = {k: i for i, k in enumerate(self.card.classes)}
            for j, k in enumerate(self.axes["domain.l1"].classes):
                full[:, col[k]] = lr[:, j]
            has = self.card.has_card(x)
            if has.any():
                full[has] = self.card.proba(x[has])
            probs["domain.l1"] = full
        if pool and repos is not None:
            groups = repo_groups(repos)
            for ax in POOLED_AXES:
                probs[ax] = pool_rows(probs[ax], groups)
        return probs

    def predict(self, x: np.ndarray, repos: Sequence[str] | None = None, pool: bool = True,
                task_type_proba: np.ndarray | None = None) -> list[dict[str, Any]]:
        """Per row: chosen value per axis (L2 as a list, or None when no child was trained) and confidences."""
        probs = self.probabilities(x, repos, pool, task_type_proba)
        out = []
        for i in range(x.shape[0]):
            row: dict[str, Any] = {"confidence": {}, "runner_up": {}}
            for ax in TRAIN_AXES:
                if ax.endswith(".l2"):
                    continue
                classes = self.classes(ax)
                order = np.argsort(-probs[ax][i], kind="stable")
                if ax == "domain.l1":  # the route with the most Domain L1 mass, then its most probable L1
                    route, mass = self._route(probs[ax][i])
                    order = np.array([j for j in order if _route_or_none(classes[j]) == route]
                                     + [j for j in order if _route_or_none(classes[j]) != route])
                    row["route"] = route
                    row["confidence"]["route"] = mass
                chosen = int(order[0])
                row[ax] = classes[chosen]
                row["confidence"][ax] = float(probs[ax][i][chosen])
                others = [int(j) for j in np.argsort(-probs[ax][i], kind="stable") if j != chosen]
                if others:
                    row["runner_up"][ax] = (classes[others[0]], float(probs[ax][i][others[0]]))
            for axis in ("task_type", "domain"):
                l1 = row[f"{axis}.l1"]
                m = self.axes[f"{axis}.l2"]
                p = probs[f"{axis}.l2"][i]
                kids = [j for j, k in enumerate(m.classes) if k.split(".", 1)[0] == l1]
                if not kids:
                    row[f"{axis}.l2"] = None
                    continue
                mass = float(p[kids].sum())
                order = sorted(kids, key=lambda j: -p[j])
                top = [m.classes[order[0]].split(".", 1)[1]]
                if len(order) > 1 and p[order[1]] >= 0.5 * p[order[0]] and m.classes[order[1]].split(".", 1)[1] != "unspecified" \
                        and top[0] != "unspecified":
                    top.append(m.classes[order[1]].split(".", 1)[1])
                row[f"{axis}.l2"] = top
                row["confidence"][f"{axis}.l2"] = row["confidence"][f"{axis}.l1"] * float(p[order[0]]) / max(mass, 1e-12)
            out.append(row)
        return out

    def _route(self, p: np.ndarray) -> tuple[str | None, float]:
        """The route with the largest summed Domain L1 probability (ties: A, B, C, unassigned) and that sum."""
        classes = self.classes("domain.l1")
        mass = {r: float(sum(p[j] for j, k in enumerate(classes) if _route_or_none(k) == r)) for r in ROUTES}
        best = max(ROUTES, key=lambda r: (mass[r], -ROUTES.index(r)))
        return best, mass[best]

    # ---- persistence --------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        from swetrain.label.io import atomic_write_bytes

        arrays: dict[str, np.ndarray] = {"mean": self.mean.astype(np.float32), "scale": self.scale.astype(np.float32)}
        header: dict[str, Any] = {"meta": self.meta, "feature_names": self.feature_names, "axes": {}}
        for ax, m in self.axes.items():
            arrays[f"{ax}.coef"] = m.coef.astype(np.float32)
            arrays[f"{ax}.intercept"] = m.intercept.astype(np.float32)
            if m.columns is not None:
                arrays[f"{ax}.columns"] = np.asarray(m.columns, dtype=np.int64)
            header["axes"][ax] = {"classes": m.classes, "temperature": m.temperature}
        if self.card is not None:
            cm = self.card
            header["card"] = {"classes": cm.classes, "has_column": cm.has_column}
            arrays.update({"card.columns": cm.columns.astype(np.int64), "card.mean": cm.mean, "card.scale": cm.scale,
                           "card.weights": cm.weights, "card.log_prior": cm.log_prior})
        if self.task_encoder is not None:  # the fine-tuned encoder lives in a folder next to the model file
            folder = encoder_folder(path)
            self.task_encoder.save(folder)
            header["task_encoder"] = {"folder": folder.name, "digest": self.task_encoder.digest()}
        arrays["header"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)
        atomic_write_bytes(path, buf.getvalue())

    @classmethod
    def load(cls, path: str | Path | None = None) -> LearnedModel:
        path = Path(path) if path is not None else DEFAULT_MODEL_PATH
        if not path.exists():
            raise ModelError(f"{path}: learned labeler model not found (train it with `swetrain label train`, or use --heuristic)")
        try:
            with np.load(path) as z:
                header = json.loads(bytes(z["header"]).decode("utf-8"))
                axes = {ax: AxisModel(h["classes"], z[f"{ax}.coef"].astype(np.float64), z[f"{ax}.intercept"].astype(np.float64),
                                      float(h["temperature"]), z[f"{ax}.columns"] if f"{ax}.columns" in z.files else None)
                        for ax, h in header["axes"].items()}
                card = None
                if "card" in header:
                    card = CardDomainModel(header["card"]["classes"], z["card.columns"], z["card.mean"], z["card.scale"],
                                           z["card.weights"], z["card.log_prior"], int(header["card"]["has_column"]))
                model = cls(header["feature_names"], z["mean"].astype(np.float64), z["scale"].astype(np.float64), axes, header["meta"], card)
        except (OSError, KeyError, ValueError) as exc:
            raise ModelError(f"{path}: not a learned labeler model ({exc})") from None
        if "task_encoder" in header:
            from swetrain.label.encoder import EncoderError, load_task_encoder

            folder = path.parent / header["task_encoder"]["folder"]
            try:
                model.task_encoder = load_task_encoder(folder)
            except EncoderError as exc:
                raise ModelError(f"{path}: its Task Type encoder: {exc}") from None
            if model.task_encoder.digest() != header["task_encoder"]["digest"]:
                raise ModelError(f"{path}: the Task Type encoder in {folder} is not the one this model was saved with (digest differs)")
        return model
