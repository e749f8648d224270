"""Audit of a labels file (the output of ``swetrain label tasks``, or the corpus) against the taxonomy.

One problem per line, ``FILE:LINE (instance): problem``: invalid JSON, no ``labels``, unknown L1
or L2 labels, an L2 outside its L1, bad scale/aux values, missing rationales, a route that does
not follow Domain L1, missing provenance, or provenance from another taxonomy version (its
``taxonomy_sha256`` differs from the definition files in use).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swetrain.label.io import jsonl_objects
from swetrain.label.provenance import taxonomy_hash
from swetrain.label.routing import route_of
from swetrain.label.schema import check_labels
from swetrain.label.taxonomy import Taxonomy


def _rationale_problems(row: dict[str, Any]) -> list[str]:
    labels = row["labels"]
    problems = []
    if "rationale" in row or "gold_from" in row:  # corpus / annotation rows: one top-level line
        if not isinstance(row.get("rationale"), str) or not row["rationale"].strip():
            problems.append("missing rationale")
        elif "\n" in row["rationale"]:
            problems.append("rationale is not one line")
    else:  # labeler output: each semantic axis carries its evidence
        for axis in ("task_type", "domain"):
            ax = labels.get(axis)
            if isinstance(ax, dict) and not str(ax.get("rationale") or "").strip():
                problems.append(f"missing rationale for {axis}")
    return problems


def audit_labels_file(path: str | Path, taxonomy: Taxonomy, require_provenance: bool | None = None) -> list[str]:
    """Every problem of a labels file (empty list: the file is clean).

    ``require_provenance``: None = required for labeler output, not for corpus/annotation rows.
    """
    path = Path(path)
    if not path.exists():
        return [f"{path}: file does not exist"]
    problems: list[str] = []
    current = taxonomy_hash(taxonomy)
    other: dict[str, list[int]] = {}
    n = 0
    for line_no, row, bad in jsonl_objects(path):
        n += 1
        if row is None:
            problems.append(str(bad))
            continue
        where = f"{path}:{line_no} ({row.get('instance_id', '?')})"
        labels = row.get("labels")
        if not isinstance(labels, dict):
            problems.append(f"{where}: no labels")
            continue
        problems += [f"{where}: {p}" for p in check_labels(labels, taxonomy)]
        if isinstance(labels.get("task_type"), dict) and isinstance(labels.get("domain"), dict):
            problems += [f"{where}: {p}" for p in _rationale_problems(row)]
        if "route" in row and not row.get("label_abstained"):
            try:
                want = route_of(labels["domain"]["l1"])
            except (ValueError, KeyError, TypeError):
                want = row.get("route")  # the unknown L1 is reported above
            if row.get("route") != want:
                problems.append(f"{where}: route {row.get('route')!r} does not follow domain L1 (expected {want!r})")
        prov = row.get("label_provenance")
        needs = require_provenance if require_provenance is not None else "route" in row
        if prov is None:
            if needs:
                problems.append(f"{where}: no label_provenance (backend, version, taxonomy hash, time)")
        elif not isinstance(prov, dict) or "taxonomy_sha256" not in prov:
            problems.append(f"{where}: label_provenance has no taxonomy_sha256")
        elif prov["taxonomy_sha256"] != current:
            other.setdefault(str(prov["taxonomy_sha256"]), []).append(line_no)
    for digest, lines in other.items():  # one problem per foreign taxonomy version, not per row
        problems.append(f"{path}:{lines[0]}: {len(lines)} row(s) labeled with another taxonomy version (taxonomy_sha256 {digest}, "
                        f"current {current} in {taxonomy.directory}); relabel them")
    if n == 0:
        problems.append(f"{path}: no rows")
    return problems
