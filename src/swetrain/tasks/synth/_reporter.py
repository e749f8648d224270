"""A pytest plugin (loaded with ``-p swetrain_synth_reporter``) writing exact node ids and outcomes.

It runs inside the *project's* interpreter, so it imports nothing from swetrain. The report path
comes from ``SWETRAIN_SYNTH_REPORT``; the JSON holds ``{"tests": {nodeid: status}, "longrepr":
{nodeid: text}, "collect_errors": {nodeid: text}}``. Statuses follow swetrain's Verdict vocabulary.
"""

import json
import os

_RESULTS = {}
_LONGREPR = {}
_COLLECT = {}
_RANK = {"PASSED": 0, "SKIPPED": 1, "XFAIL": 1, "FAILED": 2, "ERROR": 3}


def _set(nodeid, status):
    old = _RESULTS.get(nodeid)
    if old is None or _RANK[status] > _RANK[old]:
        _RESULTS[nodeid] = status


def pytest_runtest_logreport(report):
    nodeid = report.nodeid
    if report.when == "call":
        if hasattr(report, "wasxfail"):
            _set(nodeid, "FAILED" if report.passed else "XFAIL")
        elif report.passed:
            _set(nodeid, "PASSED")
        elif report.skipped:
            _set(nodeid, "SKIPPED")
        else:
            _set(nodeid, "FAILED")
    elif report.failed:  # setup or teardown error
        _set(nodeid, "ERROR")
    elif report.skipped and report.when == "setup":
        _set(nodeid, "XFAIL" if hasattr(report, "wasxfail") else "SKIPPED")
    if report.failed and report.longrepr is not None and nodeid not in _LONGREPR:
        _LONGREPR[nodeid] = str(report.longrepr)[-6000:]


def pytest_collectreport(report):
    if report.failed:
        _COLLECT[report.nodeid] = str(report.longrepr)[-6000:]


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("SWETRAIN_SYNTH_REPORT")
    if not path:
        return
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"tests": _RESULTS, "longrepr": _LONGREPR, "collect_errors": _COLLECT}, fh)
