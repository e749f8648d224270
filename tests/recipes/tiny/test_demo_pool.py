"""The demonstration pool never demonstrates a held-out task's fix location."""

from __future__ import annotations

from swetrain.tasks.record import Task
from swetrain.recipes.tiny.demo_pool import changed_sites, filter_pool

PATCH = """diff --git a/pkg/mod.py b/pkg/mod.py
--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -10,4 +10,4 @@ def f():
     a = 1
-    b = a < 2
+    b = a <= 2
     return b
"""


def _task(iid: str, repo: str, patch: str, split: str = "train") -> Task:
    return Task(instance_id=iid, repo=f"swetrain-builtin/{repo}", base_commit="0" * 40, problem_statement="x",
                patch=patch, FAIL_TO_PASS=["t::a"], PASS_TO_PASS=[], split=split)


def test_changed_sites_reads_old_line_numbers():
    assert changed_sites(PATCH) == {("pkg/mod.py", 11)}
    two = PATCH.replace("@@ -10,4 +10,4 @@ def f():", "@@ -30,4 +30,4 @@ def g():")
    assert changed_sites(PATCH + two.split("\n", 3)[3]) == {("pkg/mod.py", 11), ("pkg/mod.py", 31)}


def test_filter_pool_drops_heldout_repos_suite_duplicates_and_heldout_sites():
    heldout = _task("builtin__calcium-a", "calcium", PATCH, split="heldout")
    suite = [heldout, _task("builtin__calcium-b", "calcium", PATCH.replace("a <= 2", "a == 2"))]
    other_line = PATCH.replace("@@ -10,4", "@@ -20,4")
    candidates = [
        _task("builtin__guardpass-x", "guardpass", other_line),  # a held-out repository
        _task("builtin__calcium-b", "calcium", other_line),  # already in the suite (same id)
        _task("builtin__calcium-c", "calcium", PATCH.replace("a <= 2", "a > 2")),  # a held-out task's line
        _task("builtin__kvstash-c", "kvstash", PATCH.replace("a <= 2", "a > 2")),  # same line, other repo
        _task("builtin__calcium-d", "calcium", other_line, split="heldout"),
        _task("builtin__calcium-e", "calcium", other_line),  # same patch as d: a duplicate
    ]
    kept, why = filter_pool(candidates, suite)
    assert [t.instance_id for t in kept] == ["builtin__kvstash-c", "builtin__calcium-d"]
    assert all(t.split == "train" for t in kept)
    assert why == {"heldout_repo": 1, "in_suite": 2, "heldout_site": 1, "kept": 2}
