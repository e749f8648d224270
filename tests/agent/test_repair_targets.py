"""Where the scripted repair agent may look: only what the issue and the first observation name."""

from __future__ import annotations

from pathlib import Path

from swetrain.agent.scripted_repair import _candidate_functions, grep_cmd, issue_targets


def _tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "geo.py").write_text(
        "class Box:\n    def area(self):\n        return 1\n\n\ndef helper(x):\n    return x\n"
    )
    (root / "pkg" / "util.py").write_text("def helper(x):\n    return x + 1\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_geo.py").write_text("def test_area():\n    assert False\n")
    return root


def test_issue_targets_resolve_dotted_names(tmp_path):
    root = _tree(tmp_path)
    text = "`pkg.geo.Box.area` is wrong; see `pkg.util` and `pkg.missing.f` and `tests.test_geo.test_area`."
    assert issue_targets(root, text) == [("pkg/geo.py", "area"), ("pkg/util.py", None), ("pkg/__init__.py", "f")]


def test_candidates_come_from_issue_then_frames_then_calls(tmp_path):
    root = _tree(tmp_path)
    output = (
        "tests/test_geo.py:2: in test_area\n    assert helper(Box().area()) == 3\n"
        "pkg/util.py:2: in helper\n    return x + 1\nE   AssertionError\n"
    )
    found = [(p, f) for p, f, _, _ in _candidate_functions(root, output, "`pkg.geo.Box.area` breaks")]
    # the issue's function, the deepest non-test frame, then functions called on traceback lines
    # inside files that a frame or the issue named (frames' files first)
    assert found == [("pkg/geo.py", "area"), ("pkg/util.py", "helper"), ("pkg/geo.py", "helper")]
    assert _candidate_functions(root, "tests/test_geo.py:2: in test_area\n    assert False\n", "") == []


def test_grep_cmd_is_what_the_demo_runs():
    assert grep_cmd("pkg/geo.py", "area") == 'grep -n -A 20 "def area(" pkg/geo.py'
