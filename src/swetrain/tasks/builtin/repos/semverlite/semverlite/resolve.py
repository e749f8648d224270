"""A backtracking dependency resolver over an in-memory registry."""
from __future__ import annotations

from .ranges import Range
from .version import Version

Registry = dict[str, dict[str, dict[str, str]]]  # name -> version -> {dep: range}


class ResolutionError(RuntimeError):
    """No assignment of versions satisfies every constraint."""


def _candidates(registry: Registry, name: str, ranges: list[str]) -> list[Version]:
    if name not in registry:
        raise ResolutionError(f"unknown package {name!r}")
    parsed = [Range(r) for r in ranges]
    versions = [Version.parse(v) for v in registry[name]]
    ok = [v for v in versions if all(r.contains(v) for r in parsed)]
    return sorted(ok, reverse=True)


def resolve(registry: Registry, root: dict[str, str], max_steps: int = 10000) -> dict[str, str]:
    """Pick one version per package so every dependency range holds, preferring newer versions.

    Packages are decided in alphabetical order of the pending set; on a conflict the resolver
    backtracks. Raises ``ResolutionError`` naming the package when resolution is impossible.
    """
    steps = 0

    def solve(chosen: dict[str, Version], constraints: dict[str, list[str]]) -> dict[str, Version] | None:
        nonlocal steps
        steps += 1
        if steps > max_steps:
            raise ResolutionError("resolution step limit reached")
        for name, ranges in constraints.items():
            if name in chosen and not all(Range(r).contains(chosen[name]) for r in ranges):
                return None
        pending = sorted(n for n in constraints if n not in chosen)
        if not pending:
            return chosen
        name = pending[0]
        for version in _candidates(registry, name, constraints[name]):
            deps = registry[name][str(version)]
            merged = {k: list(v) for k, v in constraints.items()}
            for dep, rng in deps.items():
                merged.setdefault(dep, []).append(rng)
            result = solve({**chosen, name: version}, merged)
            if result is not None:
                return result
        return None

    initial = {name: [rng] for name, rng in root.items()}
    solution = solve({}, initial)
    if solution is None:
        raise ResolutionError(f"cannot satisfy {root}")
    return {name: str(v) for name, v in sorted(solution.items())}
