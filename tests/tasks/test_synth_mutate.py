"""Bug-injection transforms: every kind changes real code, deterministically, and compiles."""

from __future__ import annotations

import builtins
import collections

import pytest

from swetrain.tasks.synth.mutate import (
    CRASH_EXCEPTION,
    CRASH_KINDS,
    KIND_BUG_CLASS,
    KIND_TIER,
    KINDS,
    apply_site,
    enumerate_sites,
    is_test_path,
    make_typo,
    order_sites,
    source_files,
    taken_names,
    typo_candidates,
    typo_sources,
)

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


# ---- crash kinds (the easy tier) -----------------------------------------------------------------

CRASH_SAMPLE = '''
"""A module whose every crash site is reached by ``drive``."""
from os.path import join


class Store:
    def __init__(self, root):
        self.root = root
        self.items = {}

    def path_for(self, name):
        return join(self.root, name)

    def put(self, name, value):
        self.items[name] = value
        return len(self.items)


def describe(store, name, default="?"):
    value = store.items.get(name, default)
    return format_item(name, value=value)


def format_item(name, value):
    return f"{name}={value}"


def drive():
    store = Store("/data")
    store.put("alpha", 1)
    return store.path_for("alpha"), describe(store, "alpha")
'''


def _load(tmp_path, source, name="crashmod"):
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, path


def _one_typo(a: str, b: str) -> bool:
    """``b`` is ``a`` with one letter dropped, doubled, or two neighbours transposed."""
    if len(b) == len(a) - 1:
        return any(a[:i] + a[i + 1:] == b for i in range(1, len(a)))
    if len(b) == len(a) + 1:
        return any(b[:i] + b[i + 1:] == a and b[i] == b[i - 1] for i in range(1, len(b)))
    diff = [i for i in range(len(a)) if a[i] != b[i]] if len(a) == len(b) else []
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


def _changed_token(old_line: str, new_line: str) -> tuple[str, str]:
    import re

    old, new = re.findall(r"\w+", old_line), re.findall(r"\w+", new_line)
    [(a, b)] = [(x, y) for x, y in zip(old, new) if x != y]
    return a, b


@pytest.mark.parametrize("kind", CRASH_KINDS)
def test_crash_kind_mutant_crashes_with_traceback_into_the_file(tmp_path, kind):
    import traceback

    mod, _ = _load(tmp_path, CRASH_SAMPLE, "clean_" + kind)
    assert mod.drive() == ("/data/alpha", "alpha=1")
    sites = enumerate_sites(CRASH_SAMPLE, "crashmod.py", [kind])
    assert sites and all(s.kind == kind for s in sites)
    taken = taken_names(CRASH_SAMPLE)
    for i, site in enumerate(sites):
        new = apply_site(CRASH_SAMPLE, site)
        assert new is not None and new == apply_site(CRASH_SAMPLE, site)  # deterministic
        old_lines, new_lines = CRASH_SAMPLE.splitlines(), new.splitlines()
        changed = [n for n, (a, b) in enumerate(zip(old_lines, new_lines), 1) if a != b]
        assert changed == [site.line] and len(old_lines) == len(new_lines)
        real, typo = _changed_token(old_lines[site.line - 1], new_lines[site.line - 1])
        assert _one_typo(real, typo) and typo not in taken, (real, typo)
        mod, path = _load(tmp_path, new, f"m_{kind}_{i}")
        with pytest.raises(getattr(builtins, CRASH_EXCEPTION[kind])) as info:
            mod.drive()
        assert typo in str(info.value)
        if kind == "wrong_keyword":
            assert "unexpected keyword argument" in str(info.value)
        # the traceback names the file and the line and prints the offending source line
        frames = traceback.extract_tb(info.value.__traceback__)
        frame = next(f for f in reversed(frames) if f.filename == str(path))
        assert frame.lineno == site.line and typo in frame.line
        text = "".join(traceback.format_exception(info.value))
        assert f'File "{path}", line {site.line}' in text and new_lines[site.line - 1].strip() in text


def test_crash_kinds_sites_and_what_they_never_touch():
    src = '''
import functools

@functools.lru_cache(maxsize=None)
def f(count: Counter = DEFAULT, *, size=SIZE) -> Result:
    total: Counter = count
    for item in range(size):
        total = total + item
    self.value = total
    del self.other
    return total
'''
    sites = {k: enumerate_sites(src, "m.py", [k]) for k in CRASH_KINDS}
    # locals only: count, size, total, item loads in the body (not the annotation, default or decorator)
    local_lines = sorted(s.line for s in sites["misspell_local"])
    assert local_lines == [6, 7, 8, 8, 9, 11]
    for s in sites["misspell_local"]:
        new = apply_site(src, s)
        assert "Counter" in new and "DEFAULT" in new and "SIZE" in new and "lru_cache" in new
    assert sites["wrong_attribute"] == []  # self.value / self.other are stored / deleted, not read
    assert sites["wrong_keyword"] == []  # the decorator's keyword is evaluated at import time
    assert sites["misspell_call"] == []  # range is a builtin, not the module's function
    assert enumerate_sites("x = foo(a, key=1)\n", "m.py", CRASH_KINDS) == []  # module level: never


def test_crash_kinds_are_opt_in_and_labelled():
    assert set(CRASH_KINDS).isdisjoint(KINDS) and len(KINDS) == 13
    assert {s.kind for s in enumerate_sites(CRASH_SAMPLE, "m.py")} <= set(KINDS)  # default: standard only
    assert all(KIND_TIER[k] == "easy" for k in CRASH_KINDS) and all(KIND_TIER[k] == "standard" for k in KINDS)
    assert {KIND_BUG_CLASS[k] for k in CRASH_KINDS} == {"crash_exception"}


def test_typo_candidates_are_realistic_and_avoid_taken_names():
    cands = typo_candidates("total")
    assert cands == sorted(cands) and "total" not in cands
    assert all(_one_typo("total", c) for c in cands)
    assert "otal" not in cands and "ttotal" not in cands  # the first letter is never dropped or doubled
    assert {"totl", "tootal", "ottal"} - {"ottal"} <= set(cands) and "ottal" in cands
    assert "totl" not in typo_candidates("total", {"totl"})
    assert typo_candidates("ab") == [] and typo_candidates("__init__") == []
    assert all(len(c) >= 3 for c in typo_candidates("pos"))
    assert make_typo("total", frozenset(), "a") == make_typo("total", frozenset(), "a")
    assert len({make_typo("celsius", frozenset(), str(i)) for i in range(20)}) > 3
    assert "len" in taken_names("x = 1") and "class" in taken_names("")


def test_typo_sources_is_the_exact_inverse_of_typo_candidates():
    vocabulary = sorted(set(taken_names(SAMPLE)) - set(dir(__builtins__)) | {"spl_it", "Total2", "celsius", "aab"})
    for name in vocabulary:
        for typo in typo_candidates(name):
            assert name in typo_sources(typo), (name, typo)
    typos = {t for n in vocabulary for t in typo_candidates(n)} | {"xyz", "totl", "a"}
    for typo in typos:  # nothing else: each source really has the typo among its candidates
        expected = sorted(n for n in vocabulary if typo in typo_candidates(n))
        assert [n for n in typo_sources(typo) if n in vocabulary] == expected, typo
