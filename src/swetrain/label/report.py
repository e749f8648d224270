"""Label distributions per axis and per route (like the paper's Table 2)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from swetrain.label.routing import ROUTE_NAMES

AXES = ("task_type", "domain", "scope", "complexity", "time", "code_language", "task_spec_type", "dependency_context")
ROUTE_KEYS = ("A", "B", "C", None)


def _route_name(route: str | None) -> str:
    return f"{route} ({ROUTE_NAMES[route]})" if route else "unassigned"


def distributions(rows: Iterable[Mapping[str, Any]], top_l2: int = 10) -> dict[str, Any]:
    """Counts per axis (L1 for the semantic axes, plus their top L2) overall and per route."""
    rows = [r for r in rows if isinstance(r.get("labels"), Mapping)]
    out: dict[str, Any] = {"n": len(rows), "routes": {}, "axes": {}}
    route_counts = Counter(r.get("route") for r in rows)
    out["routes"] = {_route_name(k): route_counts.get(k, 0) for k in ROUTE_KEYS}
    for axis in AXES:
        def value(r: Mapping[str, Any]) -> str:
            v = r["labels"].get(axis)
            return v.get("l1", "?") if isinstance(v, Mapping) else str(v)

        overall = Counter(value(r) for r in rows)
        per_route = {_route_name(k): Counter(value(r) for r in rows if r.get("route") == k) for k in ROUTE_KEYS}
        out["axes"][axis] = {"overall": dict(overall.most_common()), "per_route": {k: dict(v) for k, v in per_route.items()}}
        if axis in ("task_type", "domain"):
            l2 = Counter(f"{r['labels'][axis].get('l1')}.{x}" for r in rows for x in r["labels"][axis].get("l2", []))
            out["axes"][axis]["top_l2"] = dict(l2.most_common(top_l2))
    return out


def _pct(n: int, total: int) -> str:
    return f"{n} ({100.0 * n / total:.1f}%)" if total else "0"


def markdown(dist: Mapping[str, Any], title: str = "") -> str:
    """Markdown tables: routes, then one table per axis with overall and per-route shares."""
    n = dist["n"]
    routes = list(dist["routes"])
    lines = [f"### {title}" if title else "", f"{n} labelled rows.", "", "| route | rows |", "|---|---|"]
    lines += [f"| {k} | {_pct(v, n)} |" for k, v in dist["routes"].items()]
    for axis, data in dist["axes"].items():
        lines += ["", f"**{axis}**" + (" (L1)" if axis in ("task_type", "domain") else ""), "",
                  "| label | all | " + " | ".join(r.split(" ")[0] for r in routes) + " |",
                  "|---|---|" + "---|" * len(routes)]
        for label, cnt in data["overall"].items():
            cells = [_pct(data["per_route"][r].get(label, 0), dist["routes"][r]) for r in routes]
            lines.append(f"| {label} | {_pct(cnt, n)} | " + " | ".join(cells) + " |")
        if "top_l2" in data:
            lines += ["", f"top {axis} L2: " + ", ".join(f"{k} {v}" for k, v in data["top_l2"].items())]
    return "\n".join(lines).strip() + "\n"


def rich_tables(dist: Mapping[str, Any]) -> list[Any]:
    """The same tables as rich ``Table`` objects for the terminal."""
    from rich.table import Table

    n = dist["n"]
    routes = list(dist["routes"])
    tables = []
    t = Table(title=f"routes ({n} rows)")
    t.add_column("route")
    t.add_column("rows", justify="right")
    for k, v in dist["routes"].items():
        t.add_row(k, _pct(v, n))
    tables.append(t)
    for axis, data in dist["axes"].items():
        t = Table(title=axis + (" L1" if axis in ("task_type", "domain") else ""))
        t.add_column("label")
        t.add_column("all", justify="right")
        for r in routes:
            t.add_column(r.split(" ")[0], justify="right")
        for label, cnt in data["overall"].items():
            t.add_row(label, _pct(cnt, n), *[_pct(data["per_route"][r].get(label, 0), dist["routes"][r]) for r in routes])
        tables.append(t)
    return tables
