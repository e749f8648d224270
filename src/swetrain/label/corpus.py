"""The labeled development corpus: ids + labels (pass A, pass B, final) + rationale, no issue texts.

The corpus file (``data/corpus.jsonl`` inside this package) keeps, per row, ``instance_id``,
``repo``, ``language``, ``source``, ``origin`` (which shared data file holds the text), the final
``labels`` with their one-line ``rationale``, where the final labels came from (``gold_from``:
adjudicated | agreed | pass_a) and both independent passes. Issue texts and patches are NOT
copied: :func:`load_corpus` joins them at load time by ``instance_id`` from the shared data files
(``label_pool.jsonl`` and ``swebench_verified.jsonl``) in :func:`shared_data_dir`.

:func:`build_corpus` assembles the file from the annotators' pass files and the adjudicated file
and computes the per-axis agreement between the passes (:mod:`swetrain.label.metrics`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swetrain.label.io import atomic_write_text
from swetrain.label.schema import check_axis_label, check_labels
from swetrain.label.taxonomy import Taxonomy, default_taxonomy

DATA_DIR = Path(__file__).with_name("data")
CORPUS_PATH = DATA_DIR / "corpus.jsonl"
SUPPLEMENT_PATH = DATA_DIR / "task_type_supplement.jsonl"
AGREEMENT_PATH = DATA_DIR / "agreement.json"
SHARED_ENV = "SWETRAIN_SHARED_DATA"
TEXT_FILES = {"label_pool": "label_pool.jsonl", "swebench_verified": "swebench_verified.jsonl"}
GOLD_FROM = ("adjudicated", "agreed", "pass_a")


class CorpusError(ValueError):
    """The corpus (or a file it is built from / joined with) is unusable; says which and why."""


@dataclass(frozen=True)
class CorpusRow:
    instance_id: str
    repo: str
    language: str
    source: str
    origin: str
    labels: dict[str, Any]
    rationale: str
    gold_from: str
    pass_a: dict[str, Any] | None = None
    pass_b: dict[str, Any] | None = None
    adjudicated_axes: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"instance_id": self.instance_id, "repo": self.repo, "language": self.language, "source": self.source,
               "origin": self.origin, "labels": self.labels, "rationale": self.rationale, "gold_from": self.gold_from}
        if self.adjudicated_axes is not None:
            out["adjudicated_axes"] = self.adjudicated_axes
        out.update(pass_a=self.pass_a, pass_b=self.pass_b)
        return out


def shared_data_dir(explicit: str | Path | None = None) -> Path:
    """Folder of the shared data files: ``explicit``, else ``$SWETRAIN_SHARED_DATA``, else ``../shared/data``.

    ``../shared/data`` is tried next to the repository checkout this package lives in, then next to
    the current directory. The folder is returned even when it does not exist (callers say so).
    """
    if explicit is not None:
        return Path(explicit)
    env = os.environ.get(SHARED_ENV)
    if env:
        return Path(env)
    repo_root = Path(__file__).resolve().parents[3]
    for cand in (repo_root.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"):
        if cand.is_dir():
            return cand
    return repo_root.parent / "shared" / "data"


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    from swetrain.label.io import jsonl_objects

    rows = []
    for _, row, bad in jsonl_objects(path):
        if row is None:
            raise CorpusError(str(bad))
        rows.append(row)
    return rows


def _check_row_keys(row: Mapping[str, Any], at: str, keys: Sequence[str], seen: set[str]) -> str:
    """The row's location for messages, after checking its string ``keys``, id uniqueness (``seen``) and origin."""
    where = f"{at} ({row.get('instance_id', '?')})"
    for key in keys:
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise CorpusError(f"{where}: missing or empty {key!r}")
    if row["instance_id"] in seen:
        raise CorpusError(f"{where}: duplicate instance_id")
    seen.add(row["instance_id"])
    if row["origin"] not in TEXT_FILES:
        raise CorpusError(f"{where}: origin {row['origin']!r} is not one of {list(TEXT_FILES)}")
    return where


def read_corpus(path: str | Path | None = None, taxonomy: Taxonomy | None = None) -> list[CorpusRow]:
    """Read and check the corpus file (labels only); the first bad row raises :class:`CorpusError`."""
    path = Path(path) if path is not None else CORPUS_PATH
    if not path.exists():
        raise CorpusError(f"{path}: corpus file does not exist (build it with `swetrain label corpus build`)")
    tax = taxonomy or default_taxonomy()
    out: list[CorpusRow] = []
    seen: set[str] = set()
    for i, row in enumerate(_read_jsonl(path), start=1):
        where = _check_row_keys(row, f"{path}: row {i}", ("instance_id", "repo", "origin", "rationale"), seen)
        problems = check_labels(row.get("labels") or {}, tax)
        if problems:
            raise CorpusError(f"{where}: labels do not fit the taxonomy: {'; '.join(problems)}")
        out.append(CorpusRow(instance_id=row["instance_id"], repo=row["repo"], language=str(row.get("language") or ""),
                             source=str(row.get("source") or ""), origin=row["origin"], labels=row["labels"],
                             rationale=row["rationale"], gold_from=str(row.get("gold_from") or ""),
                             pass_a=row.get("pass_a"), pass_b=row.get("pass_b"), adjudicated_axes=row.get("adjudicated_axes")))
    if not out:
        raise CorpusError(f"{path}: corpus is empty")
    return out


def load_texts(ids_by_origin: Mapping[str, set[str]], data_dir: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """``instance_id`` -> the shared data row (problem_statement, patch, ...) for the wanted ids."""
    folder = shared_data_dir(data_dir)
    out: dict[str, dict[str, Any]] = {}
    for origin, wanted in ids_by_origin.items():
        if not wanted:
            continue
        path = folder / TEXT_FILES[origin]
        if not path.exists():
            raise CorpusError(f"{path}: shared data file not found (the corpus joins issue texts from it); "
                              f"pass --data-dir or set {SHARED_ENV} to the folder holding {TEXT_FILES[origin]}")
        for row in _read_jsonl(path):
            if row.get("instance_id") in wanted:
                out[row["instance_id"]] = row
    return out


def load_corpus(path: str | Path | None = None, data_dir: str | Path | None = None,
                taxonomy: Taxonomy | None = None) -> list[dict[str, Any]]:
    """Corpus rows joined with their issue texts: task-like rows (instance_id, repo, problem_statement,
    patch, repo_language, ...) plus ``labels`` (final) and ``gold`` metadata. Missing texts raise."""
    rows = read_corpus(path, taxonomy)
    wanted: dict[str, set[str]] = {o: set() for o in TEXT_FILES}
    for r in rows:
        wanted[r.origin].add(r.instance_id)
    texts = load_texts(wanted, data_dir)
    missing = [r.instance_id for r in rows if r.instance_id not in texts]
    if missing:
        raise CorpusError(f"{len(missing)} corpus row(s) have no text in {shared_data_dir(data_dir)} "
                          f"(first: {', '.join(missing[:3])}); is that the right shared data folder?")
    out = []
    for r in rows:
        t = texts[r.instance_id]
        out.append({"instance_id": r.instance_id, "repo": r.repo, "problem_statement": t.get("problem_statement") or "",
                    "patch": t.get("patch") or "", "repo_language": r.language, "source": r.source, "origin": r.origin,
                    "labels": r.labels, "rationale": r.rationale, "gold_from": r.gold_from})
    return out


def load_supplement(path: str | Path | None = None, data_dir: str | Path | None = None,
                    taxonomy: Taxonomy | None = None) -> list[dict[str, Any]]:
    """The Task Type training supplement joined with its issue texts.

    ``data/task_type_supplement.jsonl`` holds rows of ``label_pool.jsonl`` that are not in the corpus,
    labelled on the Task Type axis only (one pass per row by one of four independent annotators with
    ``data/TASK_TYPE_GUIDE.md``; issue 33). They train the fine-tuned Task Type encoder
    (:mod:`swetrain.label.encoder`), never the evaluation: every row is checked here, and a bad one
    raises :class:`CorpusError` naming the file, row and problem. Rows keep ``labels`` =
    ``{"task_type": ...}`` only.
    """
    path = Path(path) if path is not None else SUPPLEMENT_PATH
    if not path.exists():
        raise CorpusError(f"{path}: Task Type supplement file does not exist")
    tax = taxonomy or default_taxonomy()
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, row in enumerate(_read_jsonl(path), start=1):
        where = _check_row_keys(row, f"{path}: row {i}", ("instance_id", "repo", "origin"), seen)
        labels = row.get("labels")
        task = labels.get("task_type") if isinstance(labels, dict) else None
        problems = check_axis_label(task, "task_type", tax) if isinstance(task, dict) else ["labels.task_type is missing"]
        if problems:
            raise CorpusError(f"{where}: {'; '.join(problems)}")
        rows.append(row)
    wanted: dict[str, set[str]] = {o: {r["instance_id"] for r in rows if r["origin"] == o} for o in TEXT_FILES}
    texts = load_texts(wanted, data_dir)
    missing = [r["instance_id"] for r in rows if r["instance_id"] not in texts]
    if missing:
        raise CorpusError(f"{len(missing)} supplement row(s) have no text in {shared_data_dir(data_dir)} (first: {', '.join(missing[:3])})")
    return [{"instance_id": r["instance_id"], "repo": r["repo"], "problem_statement": texts[r["instance_id"]].get("problem_statement") or "",
             "patch": texts[r["instance_id"]].get("patch") or "", "repo_language": str(r.get("language") or ""), "origin": r["origin"],
             "labels": {"task_type": r["labels"]["task_type"]}} for r in rows]


def corpus_hash(path: str | Path | None = None) -> str:
    path = Path(path) if path is not None else CORPUS_PATH
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else "missing"


# ---- building ---------------------------------------------------------------------------------
def read_pass_files(paths: Iterable[Path], taxonomy: Taxonomy, what: str) -> dict[str, dict[str, Any]]:
    """instance_id -> {labels, rationale, repo} from annotator files; invalid rows raise CorpusError."""
    out: dict[str, dict[str, Any]] = {}
    for path in paths:
        for i, row in enumerate(_read_jsonl(path), start=1):
            iid = row.get("instance_id")
            where = f"{path}:{i} ({what}, {iid})"
            if not isinstance(iid, str) or not iid:
                raise CorpusError(f"{where}: missing instance_id")
            problems = check_labels(row.get("labels") or {}, taxonomy)
            if problems:
                raise CorpusError(f"{where}: labels do not fit the taxonomy: {'; '.join(problems)}")
            rationale = str(row.get("rationale") or "").strip()
            if not rationale or "\n" in rationale:
                raise CorpusError(f"{where}: the rationale must be one non-empty line")
            out[iid] = {"labels": row["labels"], "rationale": rationale}
            if isinstance(row.get("adjudicated"), list):  # the axes the adjudicator decided
                out[iid]["adjudicated_axes"] = [str(a) for a in row["adjudicated"]]
    return out


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    from swetrain.label.metrics import AXES, axis_value

    return all(axis_value(a, ax) == axis_value(b, ax) for ax in AXES)


def build_corpus(inputs: Path, pass_a: Sequence[Path], pass_b: Sequence[Path], adjudicated: Path | None,
                 out: Path, agreement_out: Path | None = None, taxonomy: Taxonomy | None = None) -> dict[str, Any]:
    """Assemble the corpus from pass files (+ adjudicated) and write it and the agreement atomically.

    Final labels per row: the adjudicated row when there is one, else the shared labels when both
    passes agree on every agreement axis, else pass A (``gold_from`` says which). Rows without a
    pass-A label are left out. Returns a summary (counts, agreement).
    """
    from swetrain.label.metrics import agreement_table

    tax = taxonomy or default_taxonomy()
    if not inputs.exists():
        raise CorpusError(f"{inputs}: inputs file not found")
    meta = {r["instance_id"]: r for r in _read_jsonl(inputs)}
    a = read_pass_files(pass_a, tax, "pass A")
    b = read_pass_files(pass_b, tax, "pass B")
    adj = read_pass_files([adjudicated], tax, "adjudicated") if adjudicated is not None and adjudicated.exists() else {}
    for name, rows in (("pass A", a), ("pass B", b), ("adjudicated", adj)):
        unknown = [i for i in rows if i not in meta]
        if unknown:
            raise CorpusError(f"{name}: {len(unknown)} instance id(s) not in {inputs} (first: {unknown[0]})")
    corpus: list[CorpusRow] = []
    for iid, m in meta.items():
        ra, rb = a.get(iid), b.get(iid)
        if iid in adj:
            final, src = adj[iid], "adjudicated"
        elif ra is not None and rb is not None and _same(ra["labels"], rb["labels"]):
            final, src = ra, "agreed"
        elif ra is not None:
            final, src = ra, "pass_a"
        else:
            continue
        corpus.append(CorpusRow(instance_id=iid, repo=m["repo"], language=m.get("language", ""), source=m.get("source", ""),
                                origin=m["origin"], labels=final["labels"], rationale=final["rationale"], gold_from=src,
                                pass_a=ra, pass_b=rb, adjudicated_axes=final.get("adjudicated_axes") if src == "adjudicated" else None))
    if not corpus:
        raise CorpusError("no row has a pass-A label yet: nothing to build")
    pairs = [(a[i]["labels"], b[i]["labels"]) for i in meta if i in a and i in b]
    agreement = agreement_table(pairs)
    summary = {
        "rows": len(corpus), "repos": len({r.repo.lower() for r in corpus}), "languages": sorted({r.language for r in corpus}),
        "gold_from": {k: sum(r.gold_from == k for r in corpus) for k in GOLD_FROM},
        "double_labeled": len(pairs), "adjudicated_file": str(adjudicated) if adj else None,
        "adjudicator_changed_axes": sum(bool(r.adjudicated_axes) for r in corpus), "agreement": agreement,
    }
    atomic_write_text(out, "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in corpus))
    if agreement_out is not None:
        atomic_write_text(agreement_out, json.dumps(summary, indent=1) + "\n")
    return summary
