"""Small rows and a trajectory shared by the label tests."""

from __future__ import annotations

import json
from pathlib import Path

BUG_PATCH = """diff --git a/pkg/core/calc.py b/pkg/core/calc.py
--- a/pkg/core/calc.py
+++ b/pkg/core/calc.py
@@ -10,7 +10,7 @@ def total(items):
-    for i in range(len(items) - 1):
+    for i in range(len(items)):
         s += items[i]
"""

ROWS = [
    {"instance_id": "t-1", "repo": "acme/calc", "problem_statement": "total() ignores the last element: off by one.\n"
     "```python\n>>> total([1, 2, 3])\n3\n```\nExpected 6. Traceback is not raised but the result is wrong.", "patch": BUG_PATCH},
    {"instance_id": "t-2", "repo": "acme/webshop", "problem_statement": "Add support for a new --export-csv command line option so that "
     "users can export the orders of the checkout cart. It would be nice to also allow JSON.",
     "repo_description": "An e-commerce shop with cart and checkout", "repo_topics": ["ecommerce", "shop"]},
    {"instance_id": "t-3", "repo": "acme/docs", "problem_statement": "Fix typo in the documentation of the tutorial page.",
     "patch": "diff --git a/docs/tutorial.rst b/docs/tutorial.rst\n--- a/docs/tutorial.rst\n+++ b/docs/tutorial.rst\n@@ -1 +1 @@\n-teh\n+the\n"},
    {"instance_id": "t-4", "repo": "acme/kv", "problem_statement": "The server leaks file handles: the AOF file is not closed after "
     "rewrite, eventually 'too many open files'. Storage engine persistence is affected.", "repo_language": "C"},
]


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _trajectory(**extra):
    return {
        "instance_id": "t-1", "repo": "acme/calc",
        "messages": [
            {"role": "system", "content": "You are an agent."},
            {"role": "user", "content": ROWS[0]["problem_statement"]},
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "search", "arguments": {"query": "def total"}}}]},
            {"role": "tool", "content": "pkg/core/calc.py:10: def total(items):"},
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "file_editor", "arguments": "{\"path\": \"pkg/core/calc.py\"}"}}]},
            {"role": "tool", "content": "edited"},
        ],
        "final_patch": BUG_PATCH, "verdict": {"resolved": True, "status": "FULL"}, **extra,
    }
