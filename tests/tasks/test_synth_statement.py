"""Problem statements: observable behaviour only, never the gold patch."""

from __future__ import annotations

from swetrain.tasks.synth.statement import Evidence, error_lines, function_doc, leaks, write_statement

PATCH = """diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1,3 +1,3 @@
 def clamp(x, lo, hi):
-    return max(lo, min(x, hi + 1))
+    return max(lo, min(x, hi))
"""

LONGREPR = """tests/test_core.py:5: in test_clamp
    assert clamp(5, 0, 3) == 3
pkg/core.py:2: in clamp
    return max(lo, min(x, hi + 1))
E   assert 4 == 3
E    +  where 4 = clamp(5, 0, 3)
E   return max(lo, min(x, hi + 1))
"""


def _ev(**kw):
    base = dict(project="pkg", module="pkg.core", function="clamp", doc="Clamp x into [lo, hi].",
                failing_tests=("tests/test_core.py::test_clamp",),
                failures={"tests/test_core.py::test_clamp": LONGREPR}, passing_count=7)
    base.update(kw)
    return Evidence(**base)


def test_statement_has_behaviour_but_no_patch_lines():
    text = write_statement(_ev(), PATCH, seed=1)
    assert "tests/test_core.py::test_clamp" in text or "test_clamp" in text
    assert "assert 4 == 3" in text
    assert "clamp" in text
    assert leaks(text, PATCH) == []
    assert "hi + 1" not in text and "min(x, hi))" not in text


def test_templates_vary_with_seed_and_are_deterministic():
    texts = {write_statement(_ev(), PATCH, seed=s) for s in range(12)}
    assert len(texts) >= 5
    assert write_statement(_ev(), PATCH, seed=3) == write_statement(_ev(), PATCH, seed=3)


def test_private_function_is_not_named():
    text = write_statement(_ev(function="_helper"), PATCH, seed=0)
    assert "_helper" not in text and "pkg.core" in text


def test_error_lines_and_docstring():
    assert error_lines(LONGREPR)[:2] == ["assert 4 == 3", "+  where 4 = clamp(5, 0, 3)"]
    src = 'class A:\n    def f(self):\n        """Do the thing. More words here."""\n'
    assert function_doc(src, "A.f") == "Do the thing."
    assert function_doc(src, "A.g") == ""


CRASH_PATCH = """diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1,3 +1,3 @@
 def clamp(x, lo, hi):
-    return max(lo, min(x, hgih))
+    return max(lo, min(x, hi))
"""

CRASH_LONGREPR = """tests/test_core.py:5: in test_clamp
    assert clamp(5, 0, 3) == 3
pkg/core.py:2: in clamp
    return max(lo, min(x, hgih))
           ^^^^^^^^^^^^^^^^^^^^^
E   NameError: name 'hgih' is not defined
"""


def test_crash_statement_shows_a_python_traceback_without_the_changed_line():
    from swetrain.tasks.synth.statement import traceback_lines

    tb = traceback_lines(CRASH_LONGREPR, CRASH_PATCH)
    assert tb == ["Traceback (most recent call last):",
                  '  File "tests/test_core.py", line 5, in test_clamp',
                  "    assert clamp(5, 0, 3) == 3",
                  '  File "pkg/core.py", line 2, in clamp',
                  "NameError: name 'hgih' is not defined"]
    ev = _ev(failures={"tests/test_core.py::test_clamp": CRASH_LONGREPR})
    text = write_statement(ev, CRASH_PATCH, seed=3, traceback=True)
    assert "\n".join(tb) in text and "NameError" in text.splitlines()[0]
    assert leaks(text, CRASH_PATCH) == [] and "min(x, h" not in text
    # without the flag (every standard kind) the statement is what it always was
    assert write_statement(ev, CRASH_PATCH, seed=3) == write_statement(ev, CRASH_PATCH, seed=3, traceback=False)
    assert "Traceback" not in write_statement(ev, CRASH_PATCH, seed=3)


def test_crash_shown_needs_the_exception_and_a_frame_in_the_file():
    from swetrain.tasks.synth.pipeline import crash_shown

    assert crash_shown(CRASH_LONGREPR, "NameError", "pkg/core.py")
    assert not crash_shown(CRASH_LONGREPR, "AttributeError", "pkg/core.py")
    assert not crash_shown(CRASH_LONGREPR, "NameError", "pkg/other.py")
    assert not crash_shown("pkg/core.py:2: in clamp\nE   assert 4 == 3\n", "NameError", "pkg/core.py")
