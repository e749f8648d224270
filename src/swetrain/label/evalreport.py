"""Printing and plotting evaluation results: per-axis tables, confusion matrices, the abstain curve."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from swetrain.label.io import jsonl_objects
from swetrain.label.metrics import AXES

MATRIX_MAX = 12  # confusion matrices wider than this are cut to the most frequent gold labels


def read_rows(path: Path, what: str) -> list[dict[str, Any]]:
    """JSONL rows with instance_id + labels; raises ValueError naming the first bad line."""
    if not path.exists():
        raise ValueError(f"{path}: {what} file does not exist")
    rows = []
    for i, row, bad in jsonl_objects(path):
        if row is None:
            raise ValueError(bad)
        if not isinstance(row.get("instance_id"), str) or not isinstance(row.get("labels"), dict):
            raise ValueError(f"{path}:{i}: expected an object with instance_id and labels")
        rows.append(row)
    return rows


def align(gold: Sequence[dict[str, Any]], pred: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """Gold and prediction rows paired by instance_id (gold order); also the count of gold rows unpredicted."""
    by_id = {r["instance_id"]: r for r in pred}
    g = [r for r in gold if r["instance_id"] in by_id]
    return g, [by_id[r["instance_id"]] for r in g], len(gold) - len(g)


def per_class_recall(conf: Mapping[str, Any]) -> dict[str, dict[str, float | int]]:
    """Per gold class: rows, correctly predicted rows and recall, from a confusion record."""
    labels, m = list(conf["labels"]), conf["matrix"]
    out = {}
    for i, lab in enumerate(labels):
        n = sum(m[i])
        if n:
            out[lab] = {"rows": n, "correct": m[i][i], "recall": round(m[i][i] / n, 4)}
    return out


def cards_comparison_table(with_cards: Mapping[str, Any], without_cards: Mapping[str, Any], axes: Sequence[str] = AXES) -> Any:
    """Per axis: accuracy and macro-F1 with and without repository cards."""
    from rich.table import Table

    cv = with_cards.get("cv", {})
    t = Table(title=f"grouped CV, per axis: with repository cards ({cv.get('rows_with_card', '?')} of {with_cards['n']} rows have one) "
                    "vs without")
    for c in ("axis", "with cards", "macro-F1", "without cards", "macro-F1 ", "difference"):
        t.add_column(c, justify="left" if c == "axis" else "right")
    for ax in axes:
        a, b = with_cards["axes"][ax], without_cards["axes"][ax]
        t.add_row(ax, f"{100 * a['accuracy']:.1f}%", f"{a['macro_f1']:.3f}", f"{100 * b['accuracy']:.1f}%", f"{b['macro_f1']:.3f}",
                  f"{100 * (a['accuracy'] - b['accuracy']):+.1f}")
    return t


def recall_table(with_cards: Mapping[str, Any], without_cards: Mapping[str, Any], axes: Sequence[str] = ("task_type.l1", "route")) -> Any:
    """Per-class recall (correct / gold rows) of Task Type L1 and route, with and without cards."""
    from rich.table import Table

    t = Table(title="per-class recall (correct/gold rows)")
    for c in ("axis", "class", "with cards", "without cards"):
        t.add_column(c, justify="left" if c in ("axis", "class") else "right")
    for ax in axes:
        a = with_cards.get("per_class_recall", {}).get(ax) or per_class_recall(with_cards["axes"][ax]["confusion"])
        b = without_cards.get("per_class_recall", {}).get(ax) or per_class_recall(without_cards["axes"][ax]["confusion"])
        for lab in sorted(a, key=lambda k: -a[k]["rows"]):
            bb = b.get(lab, {"correct": 0, "rows": a[lab]["rows"]})
            t.add_row(ax, lab, f"{a[lab]['correct']}/{a[lab]['rows']}", f"{bb['correct']}/{bb['rows']}")
    return t


def _cut(conf: Mapping[str, Any], limit: int = MATRIX_MAX) -> tuple[list[str], list[list[int]]]:
    labels, m = list(conf["labels"]), conf["matrix"]
    if len(labels) <= limit:
        return labels, m
    keep = list(range(limit - 1))
    rest = list(range(limit - 1, len(labels)))
    rows = [[m[i][j] for j in keep] + [sum(m[i][j] for j in rest)] for i in keep]
    rows.append([sum(m[i][j] for i in rest) for j in keep] + [sum(m[i][j] for i in rest for j in rest)])
    return labels[: limit - 1] + ["(rest)"], rows


def rich_tables(result: Mapping[str, Any], axes: Sequence[str] = AXES, matrices: bool = True) -> list[Any]:
    from rich.table import Table

    t = Table(title=f"per-axis accuracy ({result['n']} rows)")
    for c in ("axis", "accuracy", "macro-F1", "top confusions"):
        t.add_column(c, justify="right" if c in ("accuracy", "macro-F1") else "left")
    for ax in axes:
        r = result["axes"][ax]
        t.add_row(ax, f"{100 * r['accuracy']:.1f}%", f"{r['macro_f1']:.3f}", "; ".join(f"{g}→{p} ×{n}" for g, p, n in r["top_confusions"][:3]))
    out = [t]
    if matrices:
        for ax in axes:
            labels, m = _cut(result["axes"][ax]["confusion"])
            mt = Table(title=f"confusion {ax} (rows gold, columns predicted)")
            mt.add_column("gold \\ pred")
            for lab in labels:
                mt.add_column(lab[:14], justify="right")
            for lab, row in zip(labels, m):
                mt.add_row(lab, *[str(v) if v else "." for v in row])
            out.append(mt)
    return out


def plot_confusions(result: Mapping[str, Any], folder: Path, axes: Sequence[str] = AXES) -> list[Path]:
    """One PNG per axis (row-normalised heat map with counts)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for ax in axes:
        labels, m = _cut(result["axes"][ax]["confusion"], 16)
        arr = np.asarray(m, dtype=float)
        norm = arr / np.maximum(arr.sum(axis=1, keepdims=True), 1)
        size = max(4.0, 0.45 * len(labels) + 2)
        fig, axis = plt.subplots(figsize=(size + 1, size))
        im = axis.imshow(norm, cmap="Blues", vmin=0, vmax=1)
        axis.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=7)
        axis.set_yticks(range(len(labels)), labels, fontsize=7)
        for i in range(len(labels)):
            for j in range(len(labels)):
                if arr[i, j]:
                    axis.text(j, i, int(arr[i, j]), ha="center", va="center", fontsize=6, color="white" if norm[i, j] > 0.5 else "black")
        r = result["axes"][ax]
        axis.set_title(f"{ax}: accuracy {100 * r['accuracy']:.1f}%, macro-F1 {r['macro_f1']:.2f}", fontsize=9)
        axis.set_xlabel("predicted")
        axis.set_ylabel("gold")
        fig.colorbar(im, ax=axis, fraction=0.046)
        fig.tight_layout()
        path = folder / f"confusion_{ax.replace('.', '_')}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def plot_coverage(result: Mapping[str, Any], folder: Path) -> Path | None:
    """Accuracy vs coverage when abstaining under a confidence threshold, one line per axis."""
    curves = {ax: r["coverage_curve"] for ax, r in result["axes"].items() if r.get("coverage_curve")}
    if not curves:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    fig, axis = plt.subplots(figsize=(6, 4.5))
    for ax, pts in curves.items():
        pts = [p for p in pts if p["accuracy"] is not None]
        axis.plot([p["coverage"] for p in pts], [p["accuracy"] for p in pts], marker=".", label=ax)
    axis.set_xlabel("coverage (share of rows kept)")
    axis.set_ylabel("accuracy on kept rows")
    axis.set_title("abstain below a confidence threshold (0.00 ... 0.95)")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=7)
    fig.tight_layout()
    path = folder / "abstain_curve.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
