"""Bug-injection transforms: every kind changes real code, deterministically, and compiles."""

from __future__ import annotations

import collections

import pytest

from swetrain.tasks.synth.mutate import KINDS, apply_site, enumerate_sites, is_test_path, order_sites, source_files

SAMPLE = '''
"""Module docstring."""

class Box:
    def get(self, key, default=None):
        """Return the value for key."""
        if key not in self.data:
            raise KeyError(key)
        total = 0
        for i in range(len(self.items)):
            total += self.items[i] * 2
            if i > 3 and not self.flag:
                continue
        x = self.items[-1] if total else self.items[0]
        self.log(key, total)
        return total <= 10 or x == False


def top(a, b):
    while a < b:
        a = a + 1
    if a:
        return a[1:n]
    else:
        return b
'''

EXPECTED = {  # one (kind, index) -> the changed line it must produce
    ("comparison_flip", 0): "if key in self.data:",
    ("boundary_shift", 0): "if i >= 3 and not self.flag:",
    ("arith_op", 0): "total += self.items[i] / 2",
    ("off_by_one", 0): "for i in range(len(self.items) - 1):",
    ("invert_if", 0): "if not (key not in self.data):",
    ("drop_bool_operand", 0): "if i > 3:",
    ("swap_args", 0): "self.log(total, key)",
    ("swap_branches", 0): "x = self.items[0] if total else self.items[-1]",
    ("remove_not", 0): "if i > 3 and self.flag:",
    ("constant_change", 0): "total = 1",
}


def test_every_kind_finds_sites_and_mutates():
    sites = enumerate_sites(SAMPLE, "pkg/box.py")
    kinds = collections.Counter(s.kind for s in sites)
    assert set(kinds) == set(KINDS)
    assert len(KINDS) >= 8
    for s in sites:
        new = apply_site(SAMPLE, s)
        assert new is not None and new != SAMPLE, s
        compile(new, "x", "exec")
        assert s.function in ("Box.get", "top")


@pytest.mark.parametrize(("kind", "index"), sorted(EXPECTED))
def test_specific_rewrites(kind, index):
    site = next(s for s in enumerate_sites(SAMPLE, "m.py", [kind]) if s.index == index)
    new = apply_site(SAMPLE, site)
    assert EXPECTED[(kind, index)] in [ln.strip() for ln in new.splitlines()]


def test_drop_and_loop_kinds():
    sites = {(s.kind, s.index): s for s in enumerate_sites(SAMPLE, "m.py")}
    guard = apply_site(SAMPLE, sites[("drop_guard", 1)])
    assert "raise KeyError(key)" not in guard
    drop = [apply_site(SAMPLE, s) for k, s in sites.items() if k[0] == "drop_statement"]
    assert any("self.log(key, total)" not in d for d in drop)
    loop = apply_site(SAMPLE, sites[("loop_break", 0)])
    assert loop.count("break") == 1


def test_module_level_code_is_never_mutated():
    assert enumerate_sites("X = 1 + 2\nif X > 2:\n    Y = True\n", "m.py") == []


def test_order_is_deterministic_and_interleaves_kinds():
    sites = enumerate_sites(SAMPLE, "m.py")
    a, b = order_sites(sites, seed=3), order_sites(sites, seed=3)
    assert a == b and sorted(a, key=str) == sorted(sites, key=str)
    assert order_sites(sites, seed=4) != a
    first_kinds = [s.kind for s in a[: len(KINDS)]]
    assert len(set(first_kinds)) == len(KINDS)  # round robin over kinds first


def test_source_files_skip_tests_and_docs(tmp_path):
    for rel in ("pkg/__init__.py", "pkg/core.py", "pkg/tests/test_core.py", "tests/test_a.py", "docs/conf.py",
                "setup.py", "conftest.py", "test_top.py"):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x = 1\n")
    assert source_files(tmp_path) == ["pkg/__init__.py", "pkg/core.py"]
    assert is_test_path("a/tests/x.py") and is_test_path("test_x.py") and not is_test_path("a/core.py")
