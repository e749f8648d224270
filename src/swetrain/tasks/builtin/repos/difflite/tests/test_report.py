import pytest

from difflite import TestCase as Case, parse_report_lines, summarize

LINES = [
    "# run 1",
    "t.py::a PASSED 0.5",
    "t.py::b failed 2.0",
    "",
    "t.py::c SKIPPED",
    "t.py::d passed 2.0",
    "t.py::e ERROR 0.1",
    "t.py::f xfail 0.01",
]


def test_parse_lines():
    cases = parse_report_lines(LINES)
    assert len(cases) == 6 and cases[0] == Case("t.py::a", "passed", 0.5) and cases[2].duration == 0.0


def test_parse_bad_status():
    with pytest.raises(ValueError, match="line 1: unknown status"):
        parse_report_lines(["x BROKEN"])


def test_parse_bad_shape():
    with pytest.raises(ValueError, match="line 2"):
        parse_report_lines(["a passed", "only-one-field"])


def test_parse_negative_duration():
    with pytest.raises(ValueError, match="negative"):
        parse_report_lines(["a passed -1"])


def test_summary_counts_and_total():
    s = summarize(parse_report_lines(LINES))
    assert s["counts"] == {"passed": 2, "failed": 1, "error": 1, "skipped": 1, "xfail": 1}
    assert s["total"] == 6 and s["duration"] == pytest.approx(4.61)


def test_summary_pass_rate_excludes_skipped():
    s = summarize(parse_report_lines(LINES))
    assert s["pass_rate"] == pytest.approx(3 / 5)


def test_summary_slowest_ties_by_id():
    s = summarize(parse_report_lines(LINES), slowest=3)
    assert s["slowest"] == ["t.py::b", "t.py::d", "t.py::a"]


def test_summary_failing_and_ok():
    s = summarize(parse_report_lines(LINES))
    assert s["failing"] == ["t.py::b", "t.py::e"] and s["ok"] is False


def test_summary_all_green():
    s = summarize([Case("x", "passed", 1.0), Case("y", "skipped", 0.0)])
    assert s["ok"] is True and s["pass_rate"] == 1.0


def test_summary_empty():
    s = summarize([])
    assert s["total"] == 0 and s["pass_rate"] == 1.0 and s["ok"] is True and s["slowest"] == []
