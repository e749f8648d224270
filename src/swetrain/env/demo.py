"""A small real task built on demand: used by ``swetrain env selfcheck``, the tests and the benchmark.

The repository is a tiny package ``calc`` whose ``mul`` is wrong at the base commit. The task has
a real gold patch, a test patch adding the failing test, FAIL_TO_PASS and PASS_TO_PASS, all
produced with git (nothing is hand-written diff text), so they apply exactly like SWE-bench's.
"""

from __future__ import annotations

import json
from pathlib import Path

from swetrain.env.gitutil import commit_all, git, init_snapshot
from swetrain.tasks.record import Task

CALC_BUGGY = '''"""Tiny arithmetic helpers."""


def add(a, b):
    return a + b


def mul(a, b):
    return a + b  # bug: should multiply


def neg(a):
    return -a
'''

CALC_FIXED = CALC_BUGGY.replace("return a + b  # bug: should multiply", "return a * b")

TESTS_BASE = '''from calc import add, neg


def test_add():
    assert add(2, 3) == 5


def test_neg():
    assert neg(4) == -4
'''

TESTS_WITH_MUL = TESTS_BASE.replace("from calc import add, neg", "from calc import add, mul, neg") + '''

def test_mul():
    assert mul(3, 4) == 12


def test_mul_zero():
    assert mul(0, 7) == 0
'''


def build_demo_task(folder: str | Path, *, filler_files: int = 0, instance_id: str = "demo__calc-1") -> Task:
    """Create the demo repository under ``folder`` and return its Task (source = folder/repo).

    ``filler_files`` adds that many small modules (for benchmarks that need a big tree); they are
    importable and have one passing test per 50 files, so the whole suite is larger than F2P+P2P.
    """
    folder = Path(folder)
    work = folder / "src-tree"
    (work / "calc").mkdir(parents=True, exist_ok=True)
    (work / "calc" / "__init__.py").write_text(CALC_BUGGY)
    (work / "tests").mkdir(exist_ok=True)
    (work / "tests" / "test_calc.py").write_text(TESTS_BASE)
    (work / ".gitignore").write_text("__pycache__/\n*.pyc\nbuild/\n")
    (work / "README.md").write_text("# calc\n\nA tiny package used by swetrain's self-check.\n")
    for i in range(filler_files):
        sub = work / "filler" / f"pkg{i // 50:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        if i % 50 == 0:
            (sub / "__init__.py").write_text("")
            (work / "tests" / f"test_filler_{i // 50:03d}.py").write_text(
                f"import importlib\n\n\ndef test_import():\n    importlib.import_module('filler.pkg{i // 50:03d}.m{i}')\n"
            )
        (sub / f"m{i}.py").write_text(f"VALUE = {i}\n\n\ndef f(x):\n    return x + VALUE\n")
    if filler_files:
        (work / "filler" / "__init__.py").write_text("")
    repo = folder / "repo"
    base = init_snapshot(work, repo, message="calc: base")
    # test patch: the new failing tests; gold patch: the fix (both made by git, then undone)
    (repo / "tests" / "test_calc.py").write_text(TESTS_WITH_MUL)
    test_patch = git(repo, "diff").stdout.decode()
    git(repo, "checkout", "-q", "--", ".")
    (repo / "calc" / "__init__.py").write_text(CALC_FIXED)
    gold = git(repo, "diff").stdout.decode()
    git(repo, "checkout", "-q", "--", ".")
    task = Task(
        instance_id=instance_id,
        repo="swetrain/calc",
        base_commit=base,
        problem_statement="`calc.mul(3, 4)` returns 7 instead of 12: mul adds instead of multiplying.",
        patch=gold,
        test_patch=test_patch,
        FAIL_TO_PASS=["tests/test_calc.py::test_mul", "tests/test_calc.py::test_mul_zero"],
        PASS_TO_PASS=["tests/test_calc.py::test_add", "tests/test_calc.py::test_neg"],
        source="repo",
    ).with_base_dir(folder)
    return task


def write_tasks_file(task: Task, path: str | Path) -> Path:
    """Write one task as JSONL (source stays relative to the file's folder)."""
    path = Path(path)
    path.write_text(json.dumps(task.to_row()) + "\n")
    return path


__all__ = ["build_demo_task", "write_tasks_file", "commit_all"]
