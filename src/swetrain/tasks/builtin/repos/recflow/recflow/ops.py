"""Relational operations on lists of dict records."""
from __future__ import annotations

from typing import Any, Callable, Iterable

Record = dict[str, Any]


def where(records: Iterable[Record], **conditions: Any) -> list[Record]:
    """Keep records matching every condition.

    A condition ``col=value`` tests equality; ``col__gt``, ``col__ge``, ``col__lt``, ``col__le``,
    ``col__ne`` and ``col__in`` compare; a record lacking the column never matches.
    """
    parsed = []
    for key, expected in conditions.items():
        col, _, op = key.partition("__")
        parsed.append((col, op or "eq", expected))
    out = []
    for rec in records:
        ok = True
        for col, op, expected in parsed:
            if col not in rec:
                ok = False
                break
            value = rec[col]
            if op == "eq":
                ok = value == expected
            elif op == "ne":
                ok = value != expected
            elif op == "gt":
                ok = value > expected
            elif op == "ge":
                ok = value >= expected
            elif op == "lt":
                ok = value < expected
            elif op == "le":
                ok = value <= expected
            elif op == "in":
                ok = value in expected
            else:
                raise ValueError(f"unknown operator {op!r} in {col}__{op}")
            if not ok:
                break
        if ok:
            out.append(rec)
    return out


def select(records: Iterable[Record], columns: list[str], rename: dict[str, str] | None = None) -> list[Record]:
    """Project records onto ``columns`` (missing ones become ``None``), optionally renaming them."""
    rename = rename or {}
    return [{rename.get(c, c): rec.get(c) for c in columns} for rec in records]


def sort_records(records: Iterable[Record], keys: list[str]) -> list[Record]:
    """Stable sort by several keys; a ``-`` prefix sorts that key descending; ``None`` sorts last."""
    out = list(records)
    for key in reversed(keys):
        desc = key.startswith("-")
        col = key[1:] if desc else key
        present = [r for r in out if r.get(col) is not None]
        absent = [r for r in out if r.get(col) is None]
        present.sort(key=lambda r: r[col], reverse=desc)
        out = present + absent
    return out


def dedupe(records: Iterable[Record], keys: list[str] | None = None, keep: str = "first") -> list[Record]:
    """Drop duplicate records (by ``keys`` or the whole record); ``keep`` is ``first`` or ``last``."""
    if keep not in ("first", "last"):
        raise ValueError(f"keep must be 'first' or 'last', got {keep!r}")
    items = list(records)
    seen: dict[tuple, int] = {}
    for index, rec in enumerate(items):
        ident = tuple(rec.get(k) for k in keys) if keys else tuple(sorted(rec.items()))
        if ident not in seen or keep == "last":
            seen[ident] = index
    chosen = sorted(seen.values())
    return [items[i] for i in chosen]


def group_by(records: Iterable[Record], key: str) -> dict[Any, list[Record]]:
    """Group records by the value of ``key`` preserving first-seen group order."""
    groups: dict[Any, list[Record]] = {}
    for rec in records:
        groups.setdefault(rec.get(key), []).append(rec)
    return groups


_AGG: dict[str, Callable[[list[Any]], Any]] = {
    "count": len,
    "sum": sum,
    "min": min,
    "max": max,
    "mean": lambda vs: sum(vs) / len(vs),
}


def aggregate(records: Iterable[Record], by: str, **specs: tuple[str, str]) -> list[Record]:
    """Group by ``by`` and compute ``name=(column, func)`` for func in count/sum/min/max/mean.

    ``None`` values are ignored; a group with no values gets ``None`` (``count`` gets 0).
    """
    out = []
    for group_key, rows in group_by(records, by).items():
        result: Record = {by: group_key}
        for name, (column, func) in specs.items():
            if func not in _AGG:
                raise ValueError(f"unknown aggregate {func!r}")
            values = [r[column] for r in rows if r.get(column) is not None]
            if func == "count":
                result[name] = len(values)
            elif values:
                result[name] = _AGG[func](values)
            else:
                result[name] = None
        out.append(result)
    return out


def _join(left: list[Record], right: list[Record], on: str, keep_unmatched: bool) -> list[Record]:
    index: dict[Any, list[Record]] = {}
    for rec in right:
        index.setdefault(rec.get(on), []).append(rec)
    right_cols = []
    for rec in right:
        for col in rec:
            if col != on and col not in right_cols:
                right_cols.append(col)
    out = []
    for lrec in left:
        matches = index.get(lrec.get(on), [])
        if not matches and keep_unmatched:
            merged = dict(lrec)
            for col in right_cols:
                merged.setdefault(col, None)
            out.append(merged)
        for rrec in matches:
            merged = dict(lrec)
            for col, value in rrec.items():
                if col == on:
                    continue
                merged[col if col not in lrec else f"{col}_right"] = value
            out.append(merged)
    return out


def inner_join(left: list[Record], right: list[Record], on: str) -> list[Record]:
    """Pairs of records with equal ``on``; clashing right columns get a ``_right`` suffix."""
    return _join(left, right, on, keep_unmatched=False)


def left_join(left: list[Record], right: list[Record], on: str) -> list[Record]:
    """Like ``inner_join`` but left records without a match are kept with right columns set to ``None``."""
    return _join(left, right, on, keep_unmatched=True)
