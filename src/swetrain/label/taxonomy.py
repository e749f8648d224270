"""The label taxonomy: YAML definition files, typed records and the structural audit.

Every concrete label is a *decision record* (paper eq. 9) with six fields: ``name``, authoritative
``source`` (a_l), ``source_concept`` (d_src), operational SWE ``rule`` (d_op), observable positive
``signals`` (s+; case-insensitive regular expressions) and ``boundaries`` to neighbouring labels (b_l).

Definition files (``taxonomy/*.yaml`` inside this package, or any folder with the same files):
``task_type.yaml`` and ``domain.yaml`` (semantic axes: L1 families with L2 children; L2 records may
also be listed flat under ``labels:`` naming their ``parent``), ``scale.yaml`` (three ordered
4-level dimensions) and ``aux.yaml`` (auxiliary metadata value sets).

:func:`audit_dir` checks the raw files and reports every violation; :meth:`Taxonomy.load` refuses
a taxonomy with violations.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

RECORD_FIELDS: tuple[str, ...] = ("name", "source", "source_concept", "rule", "signals", "boundaries")
FAMILY_FIELDS: tuple[str, ...] = ("name", "source_framework", "description")
SEMANTIC_AXES: tuple[str, ...] = ("task_type", "domain")
SCALE_DIMENSIONS: tuple[str, ...] = ("scope", "complexity", "time")
UNSPECIFIED = "unspecified"
DEFAULT_DIR = Path(__file__).with_name("taxonomy")
_FILES = {"task_type": "task_type.yaml", "domain": "domain.yaml", "scale": "scale.yaml", "aux": "aux.yaml"}


class TaxonomyError(ValueError):
    """The definition files are unreadable or violate the structure; lists every violation."""

    def __init__(self, directory: Path, violations: list[str]):
        self.directory = directory
        self.violations = violations
        lines = "\n  - ".join(violations)
        super().__init__(f"taxonomy in {directory} has {len(violations)} violation(s):\n  - {lines}")


@dataclass(frozen=True)
class DecisionRecord:
    """One L2 label or scale level (eq. 9). ``parent`` is its L1 family or scale dimension."""

    name: str
    parent: str
    axis: str
    source: str
    source_concept: str
    rule: str
    signals: tuple[str, ...]
    boundaries: str

    @property
    def qualified(self) -> str:
        return f"{self.parent}.{self.name}"

    def prototype(self) -> str:
        """Text that describes the label, used for embedding similarity and prompts."""
        return f"{self.parent} {self.name.replace('_', ' ')}: {self.source_concept} {self.rule}"


@dataclass(frozen=True)
class Family:
    """An L1 family (or scale dimension) with its source framework and ordered children."""

    name: str
    axis: str
    source_framework: str
    description: str
    signals: tuple[str, ...]
    children: tuple[DecisionRecord, ...]
    repositories: str = ""  # kinds of repository that belong here (domain families; optional)

    @property
    def child_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.children)

    def child(self, name: str) -> DecisionRecord:
        for c in self.children:
            if c.name == name:
                return c
        raise KeyError(f"{name!r} is not a child of {self.axis} L1 {self.name!r} (children: {', '.join(self.child_names) or 'none'})")

    def prototype(self) -> str:
        kids = ", ".join(c.name.replace("_", " ") for c in self.children)
        text = f"{self.name.replace('_', ' ').replace('-', ' ')}: {self.description}"
        return f"{text} Includes {kids}." if kids else text


@dataclass(frozen=True)
class AuxSpec:
    code_languages: tuple[str, ...]
    extensions: dict[str, str]  # ".py" -> "python"
    aliases: dict[str, str]
    task_spec_types: tuple[str, ...]
    dependency_contexts: tuple[str, ...]
    source_frameworks: dict[str, str]

    def normalise_language(self, value: str | None) -> str:
        """Map a free-form language name ("C++", "Jupyter Notebook") to one of the 21 values."""
        if not value:
            return "unknown"
        key = value.strip().lower()
        if key in self.code_languages:
            return key
        return self.aliases.get(key, "other")


@dataclass(frozen=True)
class Taxonomy:
    """The loaded, audited taxonomy. ``axes`` maps task_type/domain to their L1 families."""

    axes: dict[str, dict[str, Family]]
    scales: dict[str, Family]
    aux: AuxSpec
    directory: Path
    titles: dict[str, str] = field(default_factory=dict)

    # ---- construction -------------------------------------------------------------------------
    @classmethod
    def load(cls, directory: str | Path | None = None) -> Taxonomy:
        """Load and audit the definition files; raise :class:`TaxonomyError` on any violation."""
        directory = Path(directory) if directory is not None else DEFAULT_DIR
        report = audit_dir(directory)
        if report.violations:
            raise TaxonomyError(directory, report.violations)
        raw = _read_all(directory)[0]
        return _build(raw, directory)

    # ---- lookups ------------------------------------------------------------------------------
    def families(self, axis: str) -> dict[str, Family]:
        if axis not in self.axes:
            raise KeyError(f"unknown semantic axis {axis!r}; expected one of {SEMANTIC_AXES}")
        return self.axes[axis]

    def family(self, axis: str, l1: str) -> Family:
        fams = self.families(axis)
        if l1 not in fams:
            raise KeyError(f"{l1!r} is not a {axis} L1 label (known: {', '.join(fams)})")
        return fams[l1]

    def levels(self, dimension: str) -> tuple[str, ...]:
        if dimension not in self.scales:
            raise KeyError(f"unknown scale dimension {dimension!r}; expected one of {SCALE_DIMENSIONS}")
        return self.scales[dimension].child_names

    def records(self) -> list[DecisionRecord]:
        """All decision records: every L2 of both semantic axes, then every scale level."""
        out = [c for axis in SEMANTIC_AXES for f in self.axes[axis].values() for c in f.children]
        out += [lv for d in self.scales.values() for lv in d.children]
        return out

    def counts(self) -> dict[str, int]:
        return {
            "task_type_l1": len(self.axes["task_type"]),
            "task_type_l2": sum(len(f.children) for f in self.axes["task_type"].values()),
            "domain_l1": len(self.axes["domain"]),
            "domain_l2": sum(len(f.children) for f in self.axes["domain"].values()),
            "scale_dimensions": len(self.scales),
            "scale_levels": sum(len(d.children) for d in self.scales.values()),
            "decision_records": len(self.records()),
            "code_language_values": len(self.aux.code_languages),
        }


@lru_cache(maxsize=4)
def default_taxonomy() -> Taxonomy:
    """The packaged taxonomy, loaded once per process."""
    return Taxonomy.load(DEFAULT_DIR)


# ---- audit --------------------------------------------------------------------------------------
@dataclass
class AuditReport:
    directory: Path
    counts: dict[str, int]
    violations: list[str]

    @property
    def ok(self) -> bool:
        return not self.violations


def _read_all(directory: Path) -> tuple[dict[str, Any], list[str]]:
    raw: dict[str, Any] = {}
    problems: list[str] = []
    if not directory.is_dir():
        return raw, [f"{directory}: taxonomy folder does not exist"]
    for key, fname in _FILES.items():
        path = directory / fname
        if not path.exists():
            problems.append(f"{path}: definition file is missing")
            continue
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            problems.append(f"{path}: not valid YAML: {exc}")
            continue
        if not isinstance(data, dict):
            problems.append(f"{path}: expected a mapping at top level, got {type(data).__name__}")
            continue
        raw[key] = data
    return raw, problems


def _nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _check_record(rec: Any, where: str, out: list[str]) -> None:
    if not isinstance(rec, dict):
        out.append(f"{where}: decision record must be a mapping, got {type(rec).__name__}")
        return
    for f in RECORD_FIELDS:
        if f not in rec or rec[f] in (None, "", []):
            out.append(f"{where}: decision record is missing field {f!r}")
        elif f == "signals":
            if not isinstance(rec[f], list) or not all(_nonempty_str(s) for s in rec[f]):
                out.append(f"{where}: 'signals' must be a non-empty list of strings")
            else:
                for s in rec[f]:
                    try:
                        re.compile(s)
                    except re.error as exc:
                        out.append(f"{where}: signal {s!r} is not a valid regular expression ({exc})")
        elif not _nonempty_str(rec[f]):
            out.append(f"{where}: field {f!r} must be a non-empty string")
    if rec.get("name") == UNSPECIFIED:
        out.append(f"{where}: {UNSPECIFIED!r} is reserved and cannot be a label name")


def _semantic_children(data: dict[str, Any], fname: str, out: list[str]) -> dict[str, list[tuple[str, Any]]]:
    """Map declared L1 -> list of (where, raw record); records under undeclared L1s are violations."""
    fams = data.get("families")
    result: dict[str, list[tuple[str, Any]]] = {}
    if not isinstance(fams, list) or not fams:
        out.append(f"{fname}: 'families' must be a non-empty list")
        return result
    for i, fam in enumerate(fams):
        where = f"{fname}: families[{i}]"
        if not isinstance(fam, dict):
            out.append(f"{where}: L1 family must be a mapping")
            continue
        name = fam.get("name")
        where = f"{fname}: L1 {name!r}" if _nonempty_str(name) else where
        for f in FAMILY_FIELDS:
            if not _nonempty_str(fam.get(f)):
                out.append(f"{where}: L1 family is missing field {f!r}")
        if not isinstance(fam.get("signals", []), list):
            out.append(f"{where}: 'signals' must be a list")
        if not _nonempty_str(name):
            continue
        if name == UNSPECIFIED:
            out.append(f"{where}: {UNSPECIFIED!r} is reserved and cannot be a label name")
        if name in result:
            out.append(f"{fname}: duplicate L1 name {name!r}")
            continue
        kids = fam.get("children", [])
        if kids is None:
            kids = []
        if not isinstance(kids, list):
            out.append(f"{where}: 'children' must be a list")
            kids = []
        result[name] = [(f"{fname}: {name}.{(k or {}).get('name', f'children[{j}]') if isinstance(k, dict) else j}", k) for j, k in enumerate(kids)]
    for j, rec in enumerate(data.get("labels") or []):
        parent = rec.get("parent") if isinstance(rec, dict) else None
        label = rec.get("name", f"labels[{j}]") if isinstance(rec, dict) else f"labels[{j}]"
        if parent not in result:
            out.append(f"{fname}: L2 {label!r} names parent {parent!r}, which is not a declared L1")
            continue
        result[parent].append((f"{fname}: {parent}.{label}", rec))
    return result


def audit_dir(directory: str | Path | None = None) -> AuditReport:
    """Check the definition files in ``directory`` and report every structural violation."""
    from swetrain.label.routing import ROUTE_WHITELIST, UNASSIGNED_L1

    directory = Path(directory) if directory is not None else DEFAULT_DIR
    raw, violations = _read_all(directory)
    counts: dict[str, int] = {}
    for axis in SEMANTIC_AXES:
        data = raw.get(axis)
        if data is None:
            continue
        fname = _FILES[axis]
        if data.get("axis") != axis:
            violations.append(f"{fname}: 'axis' must be {axis!r}, got {data.get('axis')!r}")
        kids = _semantic_children(data, fname, violations)
        seen_l2: dict[str, str] = {}
        n_l2 = 0
        for l1, records in kids.items():
            for where, rec in records:
                n_l2 += 1
                _check_record(rec, where, violations)
                name = rec.get("name") if isinstance(rec, dict) else None
                if _nonempty_str(name):
                    if name in seen_l2:
                        violations.append(f"{fname}: duplicate L2 name {name!r} (under {seen_l2[name]!r} and {l1!r})")
                    else:
                        seen_l2[name] = l1
        counts[f"{axis}_l1"] = len(kids)
        counts[f"{axis}_l2"] = n_l2
        counts[f"{axis}_l1_without_children"] = sum(1 for r in kids.values() if not r)
        expected = data.get("expected") or {}
        for key, got in (("l1", len(kids)), ("l2", n_l2)):
            if key in expected and expected[key] != got:
                violations.append(f"{fname}: expected {expected[key]} {key.upper()} labels, found {got}")
        if axis == "domain":
            declared = set(kids)
            routed = {l1 for l1s in ROUTE_WHITELIST.values() for l1 in l1s} | set(UNASSIGNED_L1)
            for l1 in sorted(routed - declared):
                violations.append(f"routing: whitelist names Domain L1 {l1!r}, which {fname} does not declare")
            for l1 in sorted(declared - routed):
                violations.append(f"routing: Domain L1 {l1!r} is neither routed (A/B/C) nor listed as unassigned")
    scale = raw.get("scale")
    if scale is not None:
        dims = scale.get("dimensions")
        if not isinstance(dims, list):
            violations.append("scale.yaml: 'dimensions' must be a list")
            dims = []
        names = [d.get("name") for d in dims if isinstance(d, dict)]
        for n, c in Counter(names).items():
            if c > 1:
                violations.append(f"scale.yaml: duplicate dimension {n!r}")
        if sorted(n for n in names if n) != sorted(SCALE_DIMENSIONS):
            violations.append(f"scale.yaml: dimensions must be exactly {list(SCALE_DIMENSIONS)}, got {names}")
        n_levels = 0
        for d in dims:
            if not isinstance(d, dict):
                violations.append("scale.yaml: each dimension must be a mapping")
                continue
            dn = d.get("name", "?")
            for f in FAMILY_FIELDS:
                if not _nonempty_str(d.get(f)):
                    violations.append(f"scale.yaml: dimension {dn!r} is missing field {f!r}")
            levels = d.get("levels") or []
            if len(levels) != 4:
                violations.append(f"scale.yaml: dimension {dn!r} must have 4 ordered levels, found {len(levels)}")
            lnames = [lv.get("name") for lv in levels if isinstance(lv, dict)]
            for n, c in Counter(lnames).items():
                if c > 1:
                    violations.append(f"scale.yaml: duplicate level {n!r} in {dn!r}")
            for lv in levels:
                n_levels += 1
                _check_record(lv, f"scale.yaml: {dn}.{lv.get('name', '?') if isinstance(lv, dict) else '?'}", violations)
        counts["scale_dimensions"] = len(dims)
        counts["scale_levels"] = n_levels
    aux = raw.get("aux")
    if aux is not None:
        langs = (aux.get("code_language") or {}).get("values") or []
        counts["code_language_values"] = len(langs)
        if len(langs) != 21 or len(set(langs)) != len(langs):
            violations.append(f"aux.yaml: code_language must list 21 distinct values, found {len(langs)} ({len(set(langs))} distinct)")
        for must in ("other", "unknown"):
            if must not in langs:
                violations.append(f"aux.yaml: code_language must include {must!r}")
        ext = (aux.get("code_language") or {}).get("extensions") or {}
        for lang in ext:
            if lang not in langs:
                violations.append(f"aux.yaml: extensions are given for undeclared language {lang!r}")
        for key, want in (("task_spec_type", {"fuzzy", "specific"}), ("dependency_context", {"codebase", "env", "codebase+env", "none"})):
            got = set((aux.get(key) or {}).get("values") or [])
            if got != want:
                violations.append(f"aux.yaml: {key} values must be {sorted(want)}, got {sorted(got)}")
        for key in ("code_language", "task_spec_type", "dependency_context"):
            if not _nonempty_str((aux.get(key) or {}).get("source_framework")):
                violations.append(f"aux.yaml: {key} is missing 'source_framework'")
    counts["decision_records"] = counts.get("task_type_l2", 0) + counts.get("domain_l2", 0) + counts.get("scale_levels", 0)
    return AuditReport(directory=directory, counts=counts, violations=violations)


# ---- building typed objects from audited raw data -------------------------------------------------
def _record(rec: dict[str, Any], parent: str, axis: str) -> DecisionRecord:
    return DecisionRecord(
        name=rec["name"], parent=parent, axis=axis, source=rec["source"].strip(),
        source_concept=rec["source_concept"].strip(), rule=rec["rule"].strip(),
        signals=tuple(rec["signals"]), boundaries=rec["boundaries"].strip(),
    )


def _build(raw: dict[str, Any], directory: Path) -> Taxonomy:
    axes: dict[str, dict[str, Family]] = {}
    titles: dict[str, str] = {}
    for axis in SEMANTIC_AXES:
        data = raw[axis]
        titles[axis] = data.get("title", axis)
        flat: dict[str, list[dict[str, Any]]] = {}
        for rec in data.get("labels") or []:
            flat.setdefault(rec["parent"], []).append(rec)
        fams: dict[str, Family] = {}
        for fam in data["families"]:
            kids = list(fam.get("children") or []) + flat.get(fam["name"], [])
            fams[fam["name"]] = Family(
                name=fam["name"], axis=axis, source_framework=fam["source_framework"].strip(),
                description=fam["description"].strip(), signals=tuple(fam.get("signals") or ()),
                children=tuple(_record(k, fam["name"], axis) for k in kids),
                repositories=str(fam.get("repositories") or "").strip(),
            )
        axes[axis] = fams
    scales: dict[str, Family] = {}
    for d in raw["scale"]["dimensions"]:
        scales[d["name"]] = Family(
            name=d["name"], axis="scale", source_framework=d["source_framework"].strip(),
            description=d["description"].strip(), signals=(),
            children=tuple(_record(lv, d["name"], "scale") for lv in d["levels"]),
        )
    a = raw["aux"]
    cl = a["code_language"]
    extensions = {e.lower(): lang for lang, exts in (cl.get("extensions") or {}).items() for e in exts}
    aux = AuxSpec(
        code_languages=tuple(cl["values"]), extensions=extensions,
        aliases={str(k).lower(): v for k, v in (cl.get("aliases") or {}).items()},
        task_spec_types=tuple(a["task_spec_type"]["values"]),
        dependency_contexts=tuple(a["dependency_context"]["values"]),
        source_frameworks={k: a[k]["source_framework"] for k in ("code_language", "task_spec_type", "dependency_context")},
    )
    return Taxonomy(axes=axes, scales={k: scales[k] for k in SCALE_DIMENSIONS}, aux=aux, directory=directory, titles=titles)
