from __future__ import annotations

import pytest

from swetrain.label.adapters import EvidenceError, from_issue_change, from_trajectory, is_test_path, patch_stats

from label_testdata import BUG_PATCH, ROWS, _trajectory


def test_patch_stats_separates_tests_and_counts_lines() -> None:
    patch = BUG_PATCH + "diff --git a/tests/test_calc.py b/tests/test_calc.py\n--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -1 +1,2 @@\n+def test_total():\n+    assert total([1, 2, 3]) == 6\n"
    st = patch_stats(patch)
    assert st.files == ("pkg/core/calc.py",) and st.test_files == ("tests/test_calc.py",)
    assert (st.added, st.removed, st.hunks) == (3, 1, 2)
    assert patch_stats("").empty
    assert is_test_path("src/foo_test.go") and is_test_path("a/b/conftest.py") and is_test_path("web/app.spec.ts")
    assert not is_test_path("src/pkg/latest.py") and not is_test_path("src/contest/x.py")


def test_issue_change_adapter_bounds_excerpts_and_reads_metadata() -> None:
    row = dict(ROWS[1], patch="diff --git a/x.py b/x.py\n" + "+a = 1\n" * 5000)
    ev = from_issue_change(row)
    assert ev.kind == "issue_change" and ev.has_metadata and ev.topics == ("ecommerce", "shop")
    assert len(ev.patch_excerpt) < 3200 and "more characters" in ev.patch_excerpt
    assert ev.stats.added == 5000
    assert "Description: An e-commerce shop" in ev.render()
    ev2 = from_issue_change({**ROWS[0], "repo_metadata": {"description": "calculator", "topics": "math, cli", "language": "Python"}})
    assert ev2.topics == ("math", "cli") and ev2.language == "Python"
    assert not from_issue_change(ROWS[0]).has_metadata


@pytest.mark.parametrize("missing", ["instance_id", "repo", "problem_statement"])
def test_issue_change_adapter_names_missing_field(missing: str) -> None:
    row = {k: v for k, v in ROWS[0].items() if k != missing}
    with pytest.raises(EvidenceError, match=f"field '{missing}'"):
        from_issue_change(row)
    with pytest.raises(EvidenceError, match="must be a string"):
        from_issue_change({**ROWS[0], "patch": 3})


def test_trajectory_adapter_normalises_request_actions_observations_and_verdict() -> None:
    ev = from_trajectory(_trajectory())
    assert ev.kind == "trajectory" and ev.statement.startswith("total() ignores")
    assert "search(" in ev.actions and "file_editor(" in ev.actions and "edit: " in ev.actions
    assert "def total(items)" in ev.observations
    assert ev.verification == "resolved=True status=FULL"
    assert ev.stats.files == ("pkg/core/calc.py",)
    # same issue in both evidence forms: same changed files and statement
    ic = from_issue_change(ROWS[0])
    assert ic.stats == ev.stats and ic.statement == ev.statement


def test_trajectory_adapter_errors() -> None:
    with pytest.raises(EvidenceError, match="messages"):
        from_trajectory({"repo": "a/b", "messages": []})
    with pytest.raises(EvidenceError, match="repo"):
        from_trajectory({k: v for k, v in _trajectory().items() if k != "repo"})
    with pytest.raises(EvidenceError, match="user request"):
        from_trajectory({"repo": "a/b", "messages": [{"role": "system", "content": "x"}]})
