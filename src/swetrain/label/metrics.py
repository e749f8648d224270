"""Per-axis values of a label record, agreement (raw, Cohen's kappa) and accuracy / macro-F1 / confusion.

The axes compared are the semantic L1s, the first (most specific) L2 qualified by its L1
(``bug-fix.null_reference``), the route derived from Domain L1 (``unassigned`` for None), the
three scale levels and the auxiliary metadata.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from swetrain.label.routing import route_of

AXES: tuple[str, ...] = ("task_type.l1", "task_type.l2", "domain.l1", "domain.l2", "route", "scope", "complexity", "time",
                         "task_spec_type", "dependency_context", "code_language")
UNASSIGNED = "unassigned"


def axis_value(labels: Mapping[str, Any], axis: str) -> str:
    """The value of one axis of a ``Labels`` dict (``route`` derived from Domain L1)."""
    if axis == "route":
        try:
            return route_of(labels["domain"]["l1"]) or UNASSIGNED
        except ValueError:
            return UNASSIGNED
    if "." in axis:
        name, level = axis.split(".")
        ax = labels[name]
        if level == "l1":
            return str(ax["l1"])
        first = (ax.get("l2") or ["unspecified"])[0]
        return f"{ax['l1']}.{first}"
    return str(labels[axis])


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two label sequences (None when undefined: empty, or chance agreement 1)."""
    n = len(a)
    if n == 0 or n != len(b):
        return None
    po = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    pe = sum(ca[k] * cb.get(k, 0) for k in ca) / (n * n)
    if pe >= 1.0:
        return None
    return (po - pe) / (1.0 - pe)


def agreement_table(pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]], axes: Sequence[str] = AXES) -> dict[str, dict[str, Any]]:
    """Per axis: rows compared, raw agreement and Cohen's kappa of two independent label passes."""
    out: dict[str, dict[str, Any]] = {}
    for axis in axes:
        a = [axis_value(x, axis) for x, _ in pairs]
        b = [axis_value(y, axis) for _, y in pairs]
        k = cohen_kappa(a, b)
        out[axis] = {"n": len(pairs), "agreement": round(sum(x == y for x, y in zip(a, b)) / len(pairs), 4) if pairs else None,
                     "kappa": None if k is None else round(k, 4)}
    return out


def accuracy(gold: Sequence[str], pred: Sequence[str]) -> float:
    return sum(g == p for g, p in zip(gold, pred)) / len(gold) if gold else 0.0


def macro_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Unweighted mean F1 over every label that occurs in gold or prediction."""
    labels = sorted(set(gold) | set(pred))
    if not labels:
        return 0.0
    f1s = []
    for lab in labels:
        tp = sum(g == lab and p == lab for g, p in zip(gold, pred))
        fp = sum(g != lab and p == lab for g, p in zip(gold, pred))
        fn = sum(g == lab and p != lab for g, p in zip(gold, pred))
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return sum(f1s) / len(f1s)


def confusion(gold: Sequence[str], pred: Sequence[str]) -> dict[str, Any]:
    """Labels (gold frequency order, then prediction-only labels) and the count matrix [gold][pred]."""
    order = [k for k, _ in Counter(gold).most_common()]
    order += sorted(set(pred) - set(order))
    index = {k: i for i, k in enumerate(order)}
    matrix = [[0] * len(order) for _ in order]
    for g, p in zip(gold, pred):
        matrix[index[g]][index[p]] += 1
    return {"labels": order, "matrix": matrix}


def top_confusions(gold: Sequence[str], pred: Sequence[str], k: int = 5) -> list[tuple[str, str, int]]:
    pairs = Counter((g, p) for g, p in zip(gold, pred) if g != p)
    return [(g, p, n) for (g, p), n in pairs.most_common(k)]


def coverage_curve(correct: Sequence[bool], confidence: Sequence[float], thresholds: Sequence[float] | None = None) -> list[dict[str, float]]:
    """Abstain below a threshold: coverage (share kept) and accuracy on what is kept, per threshold."""
    thresholds = thresholds if thresholds is not None else [i / 20 for i in range(20)]
    out = []
    n = len(correct)
    for t in thresholds:
        kept = [c for c, p in zip(correct, confidence) if p >= t]
        out.append({"threshold": round(t, 4), "coverage": round(len(kept) / n, 4) if n else 0.0,
                    "accuracy": round(sum(kept) / len(kept), 4) if kept else None})
    return out


def evaluate(gold_rows: Sequence[Mapping[str, Any]], pred_rows: Sequence[Mapping[str, Any]], axes: Sequence[str] = AXES) -> dict[str, Any]:
    """Per-axis accuracy, macro-F1, confusion and top confusions of predictions against gold.

    Rows are matched by position (callers align them by instance_id). A prediction row's ``route``
    field, when present, is used as is (null = abstained/unassigned); ``label_confidence`` (when
    present) gives the coverage/accuracy curve per axis.
    """
    out: dict[str, Any] = {"n": len(gold_rows), "axes": {}}
    for axis in axes:
        g = [axis_value(r["labels"], axis) for r in gold_rows]
        if axis == "route":
            p = [(r.get("route") or UNASSIGNED) if "route" in r else axis_value(r["labels"], axis) for r in pred_rows]
        else:
            p = [axis_value(r["labels"], axis) for r in pred_rows]
        res: dict[str, Any] = {"accuracy": round(accuracy(g, p), 4), "macro_f1": round(macro_f1(g, p), 4),
                               "confusion": confusion(g, p), "top_confusions": top_confusions(g, p)}
        conf = [(r.get("label_confidence") or {}).get(axis) for r in pred_rows]
        if all(isinstance(c, (int, float)) for c in conf) and conf:
            if axis == "route":  # the curve is over the route before abstention
                p = [axis_value(r["labels"], axis) for r in pred_rows]
            res["coverage_curve"] = coverage_curve([a == b for a, b in zip(g, p)], conf)
        out["axes"][axis] = res
    return out
