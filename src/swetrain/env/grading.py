"""Test results -> SWE-bench resolution status, and the junit-XML reader that produces them.

Statuses come from pytest's junit XML, never from the console log: a test printing a fake
``PASSED tests/x.py::y`` line cannot change its own status.

Grading follows SWE-bench's rules (``swebench.harness.grading``): a FAIL_TO_PASS test succeeds
only when PASSED or XFAIL (SKIPPED, FAILED, ERROR and missing are failures); a PASS_TO_PASS test
succeeds when PASSED, XFAIL or SKIPPED. FULL = every F2P and every P2P succeeded; PARTIAL = some
but not all F2P succeeded and every P2P succeeded; otherwise NO. When the ``swebench`` package
imports, its ``get_eval_tests_report`` / ``get_resolution_status`` do the grading; otherwise
:func:`grade_builtin` (the same rules, tested against swebench where it is installed).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

PASSING_F2P = {"PASSED", "XFAIL"}
PASSING_P2P = {"PASSED", "XFAIL", "SKIPPED"}
_SEVERITY = {"PASSED": 0, "XFAIL": 1, "SKIPPED": 2, "FAILED": 3, "ERROR": 4}


@dataclass
class JunitCase:
    classname: str
    name: str
    status: str
    text: str


def junit_key(node_id: str) -> tuple[str, str]:
    """(classname, name) that pytest's junitxml writes for a pytest node id."""
    path, bracket, params = node_id.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def parse_junit(data: bytes, name: str = "junit report", max_bytes: int = 64 << 20) -> list[JunitCase]:
    """All testcases of a pytest junit XML document (read out of a container). ValueError when broken."""
    if len(data) > max_bytes:
        raise ValueError(f"junit report {name} is larger than {max_bytes} bytes")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ValueError(f"junit report {name} is not valid XML: {exc}") from None
    cases = []
    for tc in root.iter("testcase"):
        status, texts = "PASSED", []
        for child in tc:
            tag = child.tag
            if tag in ("failure", "error", "skipped"):
                texts.append(((child.get("message") or "") + "\n" + (child.text or "")).strip())
            if tag == "failure":
                new = "FAILED"
            elif tag == "error":
                new = "ERROR"
            elif tag == "skipped":
                new = "XFAIL" if child.get("type") == "pytest.xfail" else "SKIPPED"
            else:
                continue
            if _SEVERITY[new] > _SEVERITY[status]:
                status = new
        cases.append(JunitCase(tc.get("classname") or "", tc.get("name") or "", status, "\n".join(texts)))
    return cases


def statuses_for(node_ids: list[str], cases: list[JunitCase]) -> dict[str, JunitCase]:
    """Map each requested node id to its junit testcase (absent = not run / not collected)."""
    by_key: dict[tuple[str, str], JunitCase] = {}
    for c in cases:
        prev = by_key.get((c.classname, c.name))
        if prev is None or _SEVERITY[c.status] > _SEVERITY[prev.status]:
            by_key[(c.classname, c.name)] = c
    return {nid: by_key[junit_key(nid)] for nid in node_ids if junit_key(nid) in by_key}


def grade_builtin(status_map: dict[str, str], f2p: list[str], p2p: list[str]) -> str:
    """SWE-bench's resolution status from a {test id: status} map: 'FULL', 'PARTIAL' or 'NO'."""
    f_ok = sum(1 for t in f2p if status_map.get(t) in PASSING_F2P)
    p_ok = sum(1 for t in p2p if status_map.get(t) in PASSING_P2P)
    f_rate = f_ok / len(f2p) if f2p else 1.0
    p_rate = p_ok / len(p2p) if p2p else 1.0
    if f_rate == 1 and p_rate == 1:
        return "FULL"
    if 0 < f_rate < 1 and p_rate == 1:
        return "PARTIAL"
    return "NO"


def swebench_available() -> bool:
    try:
        import swebench.harness.grading  # noqa: F401
    except Exception:  # noqa: BLE001 - any import problem means "not usable here"
        return False
    return True


def grade_swebench(status_map: dict[str, str], f2p: list[str], p2p: list[str]) -> str:
    """The same decision made by the ``swebench`` package itself (raises ImportError without it)."""
    from swebench.harness.grading import get_eval_tests_report, get_resolution_status

    report = get_eval_tests_report(status_map, {"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p})
    return get_resolution_status(report).replace("RESOLVED_", "")


def grade(status_map: dict[str, str], f2p: list[str], p2p: list[str]) -> tuple[str, str]:
    """(status, grader): swebench's grading when it imports, the built-in rules otherwise."""
    if swebench_available():
        try:
            return grade_swebench(status_map, f2p, p2p), "swebench"
        except Exception:  # noqa: BLE001 - an incompatible swebench version: fall back
            pass
    return grade_builtin(status_map, f2p, p2p), "builtin"
