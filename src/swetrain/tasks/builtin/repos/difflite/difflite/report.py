"""Summaries of test-run reports (``nodeid STATUS duration`` lines)."""
from __future__ import annotations

from dataclasses import dataclass

STATUSES = ("passed", "failed", "error", "skipped", "xfail")


@dataclass(frozen=True)
class TestCase:
    nodeid: str
    status: str
    duration: float


def parse_report_lines(lines: list[str]) -> list[TestCase]:
    """Parse ``tests/test_x.py::test_a PASSED 0.12`` lines; blank and ``#`` lines are skipped.

    Status is case-insensitive; the duration is optional (0.0). Unknown statuses raise ``ValueError``.
    """
    cases = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) not in (2, 3):
            raise ValueError(f"line {number}: expected 'nodeid STATUS [seconds]', got {raw!r}")
        status = parts[1].lower()
        if status not in STATUSES:
            raise ValueError(f"line {number}: unknown status {parts[1]!r}")
        duration = float(parts[2]) if len(parts) == 3 else 0.0
        if duration < 0:
            raise ValueError(f"line {number}: negative duration")
        cases.append(TestCase(parts[0], status, duration))
    return cases


def summarize(cases: list[TestCase], slowest: int = 3) -> dict:
    """Counts per status, total duration, pass rate over non-skipped tests, the ``slowest`` test ids
    (longest first, ties by id), failing test ids sorted, and ``ok`` (no failures or errors)."""
    counts = {s: 0 for s in STATUSES}
    for case in cases:
        counts[case.status] += 1
    ran = len(cases) - counts["skipped"]
    passed = counts["passed"] + counts["xfail"]
    ranked = sorted(cases, key=lambda c: (-c.duration, c.nodeid))
    return {
        "counts": counts,
        "total": len(cases),
        "duration": round(sum(c.duration for c in cases), 6),
        "pass_rate": passed / ran if ran else 1.0,
        "slowest": [c.nodeid for c in ranked[:slowest]],
        "failing": sorted(c.nodeid for c in cases if c.status in ("failed", "error")),
        "ok": counts["failed"] == 0 and counts["error"] == 0,
    }
