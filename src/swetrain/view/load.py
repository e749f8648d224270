"""Read a run directory for the viewer, robustly.

A *run* is any folder that one of the commands wrote: ``swetrain rollout`` (``rollout.json`` +
``trajectories/``), ``swetrain eval`` (``eval.json`` + ``seed-S/trajectories/``), ``swetrain train``
(``config.yaml``, ``metrics.jsonl``, ``checkpoints/``, ``trajectories/``), ``swetrain quickstart``
(``summary.json``, ``eval_before/``, ``curriculum/``, the RL run's own files, ``eval_after/``) and
``swetrain experts`` (one plain run per phase under the folder). The viewer does not need to know
which: it finds every trajectory store (a ``trajectories/`` folder holding ``part-N.parquet``) under
the folder and names each by where it lies (``.``, ``eval_before``, ``seed-0``, ...).

Nothing here raises on a damaged run except :func:`open_run` on a folder that is not a run at all
(:class:`ViewError`, one line). A part that cannot be read, a metrics line cut short, a JSON file
that does not parse: each becomes a note shown at the top of the page, and the rest is shown.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

_PART = re.compile(r"^part-(\d{8})\.parquet$")
#: folders never searched for stores, plots or records (large, or not the run's own records)
_SKIP_DIRS = {"checkpoints", "tensorboard", "policy-sync", "model", "workspaces", "__pycache__", "node_modules"}
MAX_DEPTH = 6
MAX_PLOT_BYTES = 4 << 20
MAX_FILE_SHOWN = 40_000  # characters of a config/record file shown in the page

#: columns the task table needs (everything but the token arrays and the texts)
INDEX_COLUMNS = (
    "instance_id", "chain", "attempt", "context_variant", "resolved", "reward", "input_tokens", "output_tokens",
    "num_turns", "stop_reason", "timings", "policy_version", "prompt_len", "seed", "invalid", "verdict",
)


class ViewError(ValueError):
    """What the viewer cannot show at all (not a run, bad options): one line, exit 2."""


@dataclass
class Part:
    path: Path
    rows: int | None = None  # None: unreadable (see problem)
    problem: str | None = None


@dataclass
class Source:
    """One trajectory store of the run."""

    name: str  # path of its run folder relative to the run root ('.' for the root itself)
    dir: Path  # the folder holding trajectories/
    parts: list[Part] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(p.rows or 0 for p in self.parts)


@dataclass
class Run:
    root: Path
    kind: str
    sources: list[Source] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[dict[str, str]] = field(default_factory=list)  # {"name", "text"}: configs and records
    isolation: list[dict[str, Any]] = field(default_factory=list)  # {"name", "record"}
    metrics: list[dict[str, Any]] = field(default_factory=list)  # metrics.jsonl rows of the root run
    metrics_by_dir: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    plots: list[dict[str, str]] = field(default_factory=list)  # {"name", "path"}
    declared: list[dict[str, Any]] = field(default_factory=list)  # R@k the run's own records state
    json_records: dict[str, Any] = field(default_factory=dict)  # parsed top-level records by file name

    def rel(self, path: Path) -> str:
        try:
            r = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return str(path)
        return r or "."


# ------------------------------------------------------------------------------------ discovery
def _walk(root: Path) -> Iterator[Path]:
    """Every directory under ``root`` (itself included) up to MAX_DEPTH, skipping heavy folders
    and hidden ones (a phase in progress lives in ``.tmp/``)."""
    stack = [(root, 0)]
    while stack:
        d, depth = stack.pop()
        yield d
        if depth >= MAX_DEPTH:
            continue
        try:
            children = sorted((c for c in d.iterdir() if c.is_dir() and not c.is_symlink()), reverse=True)
        except OSError:
            continue
        for c in children:
            if c.name.startswith(".") or c.name in _SKIP_DIRS or c.name == "trajectories":
                continue
            stack.append((c, depth + 1))


def _parts(store_dir: Path) -> list[Path]:
    found = []
    try:
        for p in store_dir.iterdir():
            m = _PART.match(p.name)
            if m and p.is_file():
                found.append((int(m.group(1)), p))
    except OSError:
        return []
    return [p for _, p in sorted(found)]


def _kind(root: Path, has_store: bool) -> str:
    def has(name: str) -> bool:
        return (root / name).exists()

    if has("summary.json") and (has("eval_before") or has("eval_after")):
        return "quickstart"
    if any(has(n) for n in ("experts", "mopd", "baselines")) and any(has(n) for n in ("report.json", "config.yaml", "label")):
        return "experts"  # swetrain experts: one plain run per phase under the folder
    if has("eval.json"):
        return "eval"
    if has("metrics.jsonl") or has("checkpoints") or has("config.yaml"):
        return "train"
    if has("rollout.json") or (root / "trajectories").is_dir():
        return "rollout"
    return "runs" if has_store else ""


def open_run(path: str | os.PathLike) -> Run:
    """Find what ``path`` holds; :class:`ViewError` when it is not a run directory."""
    root = Path(path)
    if not root.exists():
        raise ViewError(f"{root}: no such directory")
    if not root.is_dir():
        raise ViewError(f"{root}: not a directory (give a run directory: the --out of rollout, eval, train, quickstart or experts)")
    root = root.resolve()
    sources: list[Source] = []
    for d in _walk(root):
        store = d / "trajectories"
        if store.is_dir():
            parts = _parts(store)
            if parts:
                src = Source(name=(d.relative_to(root).as_posix() or "."), dir=d, parts=[Part(p) for p in parts])
                sources.append(src)
    sources.sort(key=lambda s: (s.name != ".", s.name))
    kind = _kind(root, bool(sources))
    if not kind:
        raise ViewError(
            f"{root}: not a run directory (no trajectories/part-*.parquet, rollout.json, eval.json, summary.json, "
            "metrics.jsonl or config.yaml found)")
    run = Run(root=root, kind=kind, sources=sources)
    for src in sources:  # parts a resumed run moved aside (rollout.store.drop_unreadable)
        aside = sorted((src.dir / "trajectories").glob(".part-*.corrupt"))
        if aside:
            run.notes.append(f"{run.rel(src.dir / 'trajectories')}: {len(aside)} unreadable part(s) were moved aside by a resumed "
                             f"run ({aside[0].name}{', ...' if len(aside) > 1 else ''}); their chains were run again")
    _check_parts(run)
    _read_records(run)
    return run


def _check_parts(run: Run) -> None:
    """Row counts from every part's footer; an unreadable footer makes the part a note."""
    import pyarrow.parquet as pq

    for src in run.sources:
        for part in src.parts:
            try:
                part.rows = pq.ParquetFile(part.path).metadata.num_rows
            except Exception as exc:  # noqa: BLE001 - any unreadable part is a note
                mark_bad(run, part, exc)


def mark_bad(run: Run, part: Part, exc: BaseException) -> None:
    if part.problem is not None:
        return
    try:
        size = f"{part.path.stat().st_size} bytes"
    except OSError:
        size = "size unknown"
    detail = " ".join(str(exc).split())[:300] or type(exc).__name__
    part.rows = None
    part.problem = f"{run.rel(part.path)}: unreadable trajectory part (corrupt or truncated, {size}): {detail}; its rows are not shown"
    run.notes.append(part.problem)


# ------------------------------------------------------------------------------------ records
def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def read_json(run: Run, path: Path) -> Any:
    """Parsed JSON of ``path``, or None with a note when it does not parse."""
    text = _read_text(path)
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        run.notes.append(f"{run.rel(path)}: not valid JSON ({exc.msg} at line {exc.lineno}); not shown")
        return None


def read_metrics(run: Run, path: Path) -> list[dict[str, Any]]:
    """Rows of a ``metrics.jsonl``; lines that do not parse (a run killed mid-write) are a note."""
    text = _read_text(path)
    if not text:
        return []
    rows, bad = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if isinstance(row, dict):
            rows.append(row)
    if bad:
        run.notes.append(f"{run.rel(path)}: {bad} line(s) are not JSON (cut short?); left out")
    return rows


def _shown(text: str) -> str:
    if len(text) <= MAX_FILE_SHOWN:
        return text
    return text[:MAX_FILE_SHOWN] + f"\n[... {len(text) - MAX_FILE_SHOWN} more characters not shown ...]"


_RECORD_FILES = ("config.yaml", "rollout.json", "eval.json", "summary.json", "report.json", "report.md",
                 "selection.json", "experts.yaml", "config.json")


def _read_records(run: Run) -> None:
    root = run.root
    dirs = [d for d in _walk(root) if d == root or d.relative_to(root).parts.__len__() <= 3]
    for d in dirs:
        rel = run.rel(d)
        for name in _RECORD_FILES:
            p = d / name
            if not p.is_file() or (name == "config.json" and d != root):
                continue
            text = _read_text(p)
            if text is None:
                continue
            if name.endswith(".json"):
                obj = read_json(run, p)
                if obj is None:
                    continue
                if d == root:
                    run.json_records[name] = obj
                _declared(run, rel, name, obj)
                if name == "summary.json" and isinstance(obj, dict):  # the per-task records are in the task table
                    text = json.dumps({k: v for k, v in obj.items() if k not in ("eval_before", "eval_after")}, indent=1)
                elif name == "eval.json" and isinstance(obj, dict):
                    text = json.dumps({k: v for k, v in obj.items() if k not in ("outcomes", "tokens")}, indent=1)
            run.files.append({"name": run.rel(p), "text": _shown(text)})
        iso = d / "isolation.json"
        if iso.is_file():
            rec = read_json(run, iso)
            if rec is not None:
                run.isolation.append({"name": run.rel(iso), "record": rec})
        met = d / "metrics.jsonl"
        if met.is_file():
            rows = read_metrics(run, met)
            run.metrics_by_dir[rel] = rows
            if d == root:
                run.metrics = rows
    if not run.metrics and run.metrics_by_dir:  # experts: the first phase with metrics
        first = sorted(run.metrics_by_dir)[0]
        run.metrics = run.metrics_by_dir[first]
    if not run.isolation and run.sources:
        run.notes.append("no isolation.json: this run does not record whether agent commands were isolated")
    _plots(run)


def _plots(run: Run) -> None:
    seen = set()
    for d in _walk(run.root):
        if len(d.relative_to(run.root).parts) > 3:
            continue
        try:
            pngs = sorted(p for p in d.iterdir() if p.suffix.lower() == ".png" and p.is_file())
        except OSError:
            continue
        for p in pngs:
            try:
                size = p.stat().st_size
                head = p.read_bytes()[:8] if size else b""
            except OSError:
                continue
            if head != b"\x89PNG\r\n\x1a\n":
                run.notes.append(f"{run.rel(p)}: not a PNG image; not shown")
                continue
            if size > MAX_PLOT_BYTES:
                run.notes.append(f"{run.rel(p)}: {size} bytes, over the {MAX_PLOT_BYTES} bytes shown inline; not shown")
                continue
            if (p.name, size) in seen:  # experts copy their report plots to the root
                continue
            seen.add((p.name, size))
            run.plots.append({"name": run.rel(p), "path": str(p)})


_RK = re.compile(r"^(resolved(@|_at_)\d+|conditional_recovery|recovery)$")


def _pick_rk(d: Any) -> dict[str, float]:
    if not isinstance(d, dict):
        return {}
    return {str(k).replace("resolved_at_", "resolved@"): v for k, v in d.items()
            if _RK.match(str(k)) and isinstance(v, (int, float)) and not isinstance(v, bool)}


def _declared(run: Run, rel: str, name: str, obj: Any) -> None:
    """R@k as the run's own records state them (shown beside the values recounted from rows)."""
    where = f"{rel}/{name}" if rel != "." else name
    if not isinstance(obj, dict):
        return
    if name == "rollout.json":
        vals = _pick_rk(obj.get("result"))
        if vals:
            run.declared.append({"record": where, "what": "rollout", **vals})
    elif name == "summary.json":
        for key in ("before", "after"):
            vals = _pick_rk(obj.get(key))
            if vals:
                run.declared.append({"record": where, "what": key, **vals})
        paired = obj.get("paired")
        if isinstance(paired, dict) and paired.get("diff") is not None:
            run.declared.append({"record": where, "what": f"paired after - before ({paired.get('metric', 'resolved_at_2')})",
                                 "diff": paired.get("diff"), "ci_low": paired.get("ci_low"), "ci_high": paired.get("ci_high"),
                                 "tasks": paired.get("n_tasks")})
    elif name == "eval.json" and "per_task" in obj and "outcomes" not in obj:
        # swetrain experts' per-model record: {model, per_task: {id: score}}
        scores = [v for v in (obj.get("per_task") or {}).values() if isinstance(v, (int, float))]
        if scores:
            run.declared.append({"record": where, "what": f"model {obj.get('model', '?')}: mean task score",
                                 "score": sum(scores) / len(scores), "tasks": len(scores)})
    elif name == "eval.json":
        try:
            from swetrain.eval.protocol import summarize_record

            summ = summarize_record(obj)
        except Exception as exc:  # noqa: BLE001 - an old or partial record: a note
            run.notes.append(f"{where}: Resolved@K could not be derived ({type(exc).__name__}: {exc})")
            return
        vals: dict[str, Any] = {}
        curve = summ.get("resolved_at") or summ.get("resolved_curve") or summ.get("resolved@k")
        if isinstance(curve, list):
            vals.update({f"resolved@{i + 1}": v for i, v in enumerate(curve) if isinstance(v, (int, float))})
        vals.update(_pick_rk(summ))
        if "conditional_recovery" not in vals and isinstance(summ.get("conditional_recovery"), (int, float)):
            vals["conditional_recovery"] = summ["conditional_recovery"]
        what = f"{obj.get('mode', 'eval')} ({obj.get('context', '')})".strip()
        if vals:
            run.declared.append({"record": where, "what": what, **vals})


# ------------------------------------------------------------------------------------ rows
def read_part(run: Run, part: Part, columns: list[str] | tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Rows of one part (only ``columns`` that exist); [] with a note when it cannot be read.

    List columns (token ids, mask, segments, log-probs, invalid flags) come as numpy arrays (one
    slice of the column's values per row: no per-element Python objects); the rest as Python values.
    Page checksums (the store writes them) are verified, so bytes overwritten inside the data are
    caught like a truncated file.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    if part.problem is not None:
        return []
    try:
        pf = pq.ParquetFile(part.path, page_checksum_verification=True)
        names = set(pf.schema_arrow.names)
        cols = None if columns is None else [c for c in columns if c in names]
        table = pf.read(columns=cols)
        out: dict[str, list[Any]] = {}
        for name in table.column_names:
            col = table.column(name)
            if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
                arr = col.combine_chunks()
                flat = arr.flatten()
                if pa.types.is_boolean(flat.type) or flat.null_count:  # small columns; numpy via lists
                    values = np.array(flat.to_pylist(), dtype=bool if pa.types.is_boolean(flat.type) else object)
                else:  # ids, mask, segments, log-probs: a view of the column's own buffer
                    values = _numpy(flat)
                offsets = _numpy(arr.offsets)
                base = offsets[0]
                out[name] = [None if not arr[i].is_valid else values[offsets[i] - base: offsets[i + 1] - base]
                             for i in range(len(arr))]
            else:
                out[name] = col.to_pylist()
        n = table.num_rows
        return [{k: v[i] for k, v in out.items()} for i in range(n)]
    except Exception as exc:  # noqa: BLE001 - a damaged part is a note, the rest is shown
        mark_bad(run, part, exc)
        return []


def _numpy(arr: Any) -> Any:
    """A numpy view of a primitive pyarrow array without nulls (``Array.to_numpy`` would import
    pandas, a second of start-up)."""
    import numpy as np
    import pyarrow as pa

    dtype = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
             pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64,
             pa.float32(): np.float32, pa.float64(): np.float64}.get(arr.type)
    if dtype is None:
        return np.array(arr.to_pylist(), dtype=object)
    data = arr.buffers()[1]
    if data is None:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=len(arr), offset=arr.offset * np.dtype(dtype).itemsize)


def iter_rows(run: Run, columns: list[str] | tuple[str, ...] | None = None) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    """(source index, part index, row in part, row) over every readable part of the run."""
    for si, src in enumerate(run.sources):
        for pi, part in enumerate(src.parts):
            for ri, row in enumerate(read_part(run, part, columns)):
                yield si, pi, ri, row


def json_field(value: Any, default: Any = None) -> Any:
    """A JSON-text column value parsed (None/empty/invalid -> ``default``)."""
    if value is None or value == "":
        return default
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return default


# ------------------------------------------------------------------------------------ task labels
def package_dir(name: str) -> Path | None:
    """The folder of package ``name`` without importing it (only its parents)."""
    from importlib.util import find_spec

    try:
        spec = find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def task_labels(run: Run) -> dict[str, dict[str, Any]]:
    """instance_id -> {"route", "category", "kind", "tier", "split", "repo"} from the task records the
    run used: the built-in suite, a train config's ``tasks.source`` file, and task files in the run."""
    files: list[Path] = []
    builtin = package_dir("swetrain.tasks")
    if builtin is not None:  # the file only: importing the suite's package is not needed
        files.append(builtin / "builtin" / "tasks.jsonl")
    cfg_text = _read_text(run.root / "config.yaml")
    if cfg_text:
        m = re.search(r"^\s*source:\s*['\"]?([^'\"\n]+?\.jsonl?)['\"]?\s*$", cfg_text, re.M)
        if m:
            p = Path(m.group(1))
            files.append(p if p.is_absolute() else run.root / p)
    for d in [run.root, *[run.root / n for n in ("routes", "label", "labels", "curriculum")]]:
        if d.is_dir():
            files.extend(sorted(p for p in d.glob("*.jsonl") if p.name != "metrics.jsonl"))
    out: dict[str, dict[str, Any]] = {}
    for path in files:
        try:
            if not path.is_file() or path.stat().st_size > (200 << 20):
                continue
            with open(path, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if '"instance_id"' not in line:
                        continue
                    try:
                        rec = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if isinstance(rec, dict) and isinstance(rec.get("instance_id"), str):
                        lab = _labels(rec)
                        if lab:
                            out.setdefault(rec["instance_id"], {}).update({k: v for k, v in lab.items() if v is not None})
        except OSError:
            continue
    return out


def _labels(rec: dict[str, Any]) -> dict[str, Any]:
    labels = rec.get("labels") if isinstance(rec.get("labels"), dict) else {}
    synth = labels.get("synth") if isinstance(labels.get("synth"), dict) else {}
    domain = labels.get("domain") if isinstance(labels.get("domain"), dict) else {}
    ttype = labels.get("task_type") if isinstance(labels.get("task_type"), dict) else {}
    tier = labels.get("tier", synth.get("tier", rec.get("tier")))
    if isinstance(tier, dict):
        tier = tier.get("l1") or tier.get("name")
    cat = domain.get("l1") or labels.get("category")
    if ttype.get("l1"):
        cat = f"{cat}/{ttype['l1']}" if cat else ttype["l1"]
    return {"route": rec.get("route"), "category": cat, "kind": synth.get("kind"), "tier": tier,
            "split": rec.get("split"), "repo": rec.get("repo")}
