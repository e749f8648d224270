"""Protected test configuration: pytest sections, skip/xfail lines, and the verifier refusing them.

The pure rules (:func:`swetrain.env.protect.find_violations`) are checked on real unified diffs of
small texts; the verifier is checked on the real demo task (git, pytest, sandbox; nothing mocked).
"""

from __future__ import annotations

import difflib

import pytest

from swetrain.env import verifier as verifier_mod
from swetrain.env.gitutil import commit_all
from swetrain.env.protect import UNCHECKED, find_violations, protected_changes
from swetrain.env.verifier import Verifier
from swetrain.env.workspace import Workspace

# ------------------------------------------------------------------------------ pure rules
SETUP_CFG = """[metadata]
name = calc
version = 1.0

[options]
install_requires =
    numpy>=1.20

[tool:pytest]
python_files = test_*.py
filterwarnings =
    error

[flake8]
max-line-length = 100
"""

PYPROJECT = """[project]
name = "calc"
dependencies = ["numpy>=1.20"]

[tool.pytest.ini_options]
python_files = ["test_*.py"]

[tool.black]
line-length = 100
"""

TOX_INI = """[tox]
envlist = py311

[testenv]
deps = numpy>=1.20
commands = pytest

[pytest]
python_files = test_*.py
"""

BASE = {"setup.cfg": SETUP_CFG, "pyproject.toml": PYPROJECT, "tox.ini": TOX_INI, "calc/__init__.py": "x = 1\n"}


def _diff(path: str, before: str | None, after: str | None) -> str:
    """A real unified diff (git style headers) between two texts."""
    a = [] if before is None else before.splitlines(keepends=True)
    b = [] if after is None else after.splitlines(keepends=True)
    old = "/dev/null" if before is None else f"a/{path}"
    new = "/dev/null" if after is None else f"b/{path}"
    mode = "new file mode 100644\n" if before is None else "deleted file mode 100644\n" if after is None else ""
    return f"diff --git a/{path} b/{path}\n{mode}" + "".join(difflib.unified_diff(a, b, old, new))


def _check(patch: str, files=BASE, **kw):
    return find_violations(patch, files.get, **kw)


def _rules(violations):
    return sorted({v.rule for v in violations})


@pytest.mark.parametrize("line, rule", [
    ('    pytest.xfail("known bug")', "xfails-tests"),
    ("from pytest import xfail", "xfails-tests"),
    ("@pytest.mark.xfail(strict=False)", "xfails-tests"),
    ("@unittest.expectedFailure", "xfails-tests"),
    ('    pytest.skip("not today")', "skips-tests"),
    ("@pytest.mark.skip", "skips-tests"),
    ('@pytest.mark.skipif(True, reason="x")', "skips-tests"),
    ('@unittest.skip("x")', "skips-tests"),
    ('    raise unittest.SkipTest("x")', "skips-tests"),
    ('        self.skipTest("x")', "skips-tests"),
    ("np = pytest.importorskip('numpy')", "skips-tests"),
    ('collect_ignore = ["tests/test_calc.py"]', "skips-tests"),
    ("__test__ = False", "skips-tests"),
    ("def pytest_collection_modifyitems(config, items):", "pytest-hooks"),
    ("def pytest_runtest_makereport(item, call):", "pytest-hooks"),
    ("@pytest.hookimpl(hookwrapper=True)", "pytest-hooks"),
    ('pytest_plugins = ["calc.plugin"]', "pytest-hooks"),
    ('args = ["--deselect", "tests/test_calc.py::test_mul"]', "pytest-options"),
    ("addopts = -q", "pytest-options"),
    ('cmd = "pytest -p no:randomly"', "pytest-options"),
    ('os.environ["PYTEST_ADDOPTS"] = "-k not mul"', "pytest-options"),
    ('glob.glob(".swetrain-junit-*.xml")', "verifier-report"),
])
def test_added_line_rules_name_file_line_and_rule(line, rule):
    before = BASE["calc/__init__.py"]
    patch = _diff("calc/__init__.py", before, before + "import pytest\n" + line + "\n")
    (v,) = _check(patch)
    assert v.rule == rule and v.path == "calc/__init__.py" and v.line == 3
    assert v.message.startswith("calc/__init__.py:3: adds `") and f"rule: {rule}" in v.message
    assert protected_changes(patch, BASE.get) == [v.message]


@pytest.mark.parametrize("line", [
    "skip = True", "def skip_whitespace(text):", "xfail_strict_mode = 1", 'print("3 files skipped")',
    "import unittest", "version = '2.0'", "    return a * b",
])
def test_ordinary_lines_are_allowed(line):
    before = BASE["calc/__init__.py"]
    assert _check(_diff("calc/__init__.py", before, before + line + "\n")) == []


def test_removed_lines_and_docs_are_not_scanned():
    before = "import pytest\n\n@pytest.mark.xfail\ndef old():\n    pass\n"
    assert _check(_diff("calc/old.py", before, "def old():\n    pass\n"), {"calc/old.py": before}) == []
    assert _check(_diff("docs/testing.rst", None, "Use ``pytest.xfail()`` or ``@pytest.mark.skip``.\n")) == []


@pytest.mark.parametrize("path, old, new", [
    ("setup.cfg", "version = 1.0", "version = 1.1"),
    ("setup.cfg", "    numpy>=1.20", "    numpy>=1.26"),
    ("setup.cfg", "max-line-length = 100", "max-line-length = 120"),
    ("pyproject.toml", 'dependencies = ["numpy>=1.20"]', 'dependencies = ["numpy>=1.26", "scipy"]'),
    ("pyproject.toml", "line-length = 100", "line-length = 88"),
    ("tox.ini", "deps = numpy>=1.20", "deps = numpy>=1.26"),
    ("setup.cfg", "[flake8]", "# a comment\n[flake8]"),
])
def test_config_changes_outside_the_pytest_section_are_allowed(path, old, new):
    assert old in BASE[path]
    assert _check(_diff(path, BASE[path], BASE[path].replace(old, new))) == []


@pytest.mark.parametrize("path, old, new", [
    ("setup.cfg", "python_files = test_*.py", "python_files = check_*.py"),
    ("setup.cfg", "    error", "    ignore"),
    ("setup.cfg", "[tool:pytest]\n", "[tool:pytest]\npython_functions = nothing_*\n"),
    ("setup.cfg", "[tool:pytest]", "[tool:pytest_off]"),
    ("pyproject.toml", 'python_files = ["test_*.py"]', 'python_files = ["check_*.py"]'),
    ("pyproject.toml", "[tool.black]", '[tool.pytest]\nminversion = "9.0"\n\n[tool.black]'),
    ("tox.ini", "python_files = test_*.py", "python_files = check_*.py"),
])
def test_pytest_section_changes_are_refused(path, old, new):
    assert old in BASE[path]
    (v,) = _check(_diff(path, BASE[path], BASE[path].replace(old, new)))
    assert v.rule == "pytest-config" and v.path == path
    assert v.message.startswith(f"{path}: changes the pytest section") and "rule: pytest-config" in v.message


def test_new_deleted_and_renamed_config_files():
    section = "[pytest]\npython_functions = nothing_*\n"
    assert _rules(_check(_diff("tests/tox.ini", None, section))) == ["pytest-config"]  # any folder
    assert _check(_diff("sub/setup.cfg", None, "[metadata]\nname = sub\n")) == []
    assert _rules(_check(_diff("setup.cfg", SETUP_CFG, None))) == ["pytest-config"]  # deleting the section
    rename = ("diff --git a/setup.cfg b/old-setup.cfg\nsimilarity index 100%\n"
              "rename from setup.cfg\nrename to old-setup.cfg\n")
    assert _rules(_check(rename)) == ["pytest-config"]
    for name in (".pytest.ini", "pytest.ini", "pytest.toml", "sub/conftest.py", "sitecustomize.py"):
        (v,) = _check(_diff(name, None, "[pytest]\n"))
        assert v.rule == "protected-file" and v.message.startswith(f"{name}: protected file")


def test_unapplicable_config_hunk_is_unchecked_then_judged_on_the_tree():
    patch = _diff("setup.cfg", SETUP_CFG, SETUP_CFG.replace("version = 1.0", "version = 1.1"))
    drifted = dict(BASE, **{"setup.cfg": SETUP_CFG.replace("name = calc", "name = calc2")})
    assert _rules(_check(patch, drifted)) == [UNCHECKED]
    # the verifier's second pass reads the patched tree: a version bump is fine ...
    after_ok = drifted["setup.cfg"].replace("version = 1.0", "version = 1.1")
    assert _check(patch, drifted, read_post={**drifted, "setup.cfg": after_ok}.get) == []
    # ... a tree whose pytest section differs is not, whatever the patch text claims
    after_bad = after_ok.replace("python_files = test_*.py", "python_files = check_*.py")
    assert _rules(_check(patch, drifted, read_post={**drifted, "setup.cfg": after_bad}.get)) == ["pytest-config"]


def test_post_mode_reads_real_added_lines():
    """Whatever the patch text shows (e.g. a binary literal), the tree's new lines are scanned."""
    patch = "diff --git a/calc/x.py b/calc/x.py\nnew file mode 100644\nGIT binary patch\nliteral 1\nIcmZ?d00001\n\n"
    assert _check(patch) == []  # nothing readable in the text
    post = {**BASE, "calc/x.py": "import pytest\npytest.xfail('x')\n"}
    (v,) = _check(patch, read_post=post.get)
    assert v.rule == "xfails-tests" and v.message.startswith("calc/x.py:2:")


def test_gold_patch_exempts_the_rules_it_breaks_itself():
    """A fix inside pytest's own hooks stays solvable; everything else is still enforced."""
    before = "def pytest_runtest_setup(item):\n    pass\n"
    files = {**BASE, "src/_pytest/skipping.py": before}
    gold = _diff("src/_pytest/skipping.py", before, before + "\n\ndef pytest_runtest_call(item):\n    pass\n")
    model = _diff("src/_pytest/skipping.py", before, before + "\n\ndef pytest_runtest_teardown(item):\n    pass\n")
    assert _rules(_check(model, files)) == ["pytest-hooks"]
    assert _check(model, files, reference_patch=gold) == []
    hack = _diff("src/_pytest/skipping.py", before, before + "pytest.xfail('x')\n")
    assert _rules(_check(hack, files, reference_patch=gold)) == ["xfails-tests"]
    # a pytest section change equal to the gold patch's is accepted, another one is not
    new_cfg = SETUP_CFG.replace("    error", "    error\n    ignore::DeprecationWarning")
    gold_cfg = _diff("setup.cfg", SETUP_CFG, new_cfg)
    assert _check(gold_cfg, reference_patch=gold_cfg) == []
    other = _diff("setup.cfg", SETUP_CFG, SETUP_CFG.replace("    error", "    ignore"))
    assert _rules(_check(other, reference_patch=gold_cfg)) == ["pytest-config"]


def test_protected_paths_are_refused():
    (v,) = _check(_diff("tests/test_calc.py", "a\n", "b\n"), {"tests/test_calc.py": "a\n"},
                  protected_paths={"tests/test_calc.py"})
    assert v.rule == "protected-file" and "test file of this task" in v.message


# ------------------------------------------------------------------------ real verifier
@pytest.fixture
def verifier(tmp_path):
    return Verifier(timeout_s=60, test_timeout_s=5, root=tmp_path / "vroot")


def _patch_for(task, tmp_path, script: str) -> str:
    """A real git patch: run ``script`` in a workspace and take its diff."""
    with Workspace.create(task, root=tmp_path / "mk") as ws:
        res = ws.run(script)
        assert res.returncode == 0, res.output
        return ws.diff()


def _set_mul(body: str) -> str:
    return (f"python - <<'EOF'\np='calc/__init__.py'\ns=open(p).read()\n"
            f"s=s.replace('    return a + b  # bug: should multiply', {body!r})\nopen(p,'w').write(s)\nEOF")


XFAIL_HACK = "    import pytest\n    pytest.xfail('multiplication is a known issue')"


def test_xfail_hack_is_refused_but_would_have_been_full(task, verifier, tmp_path, monkeypatch):
    """Library code calling pytest.xfail() during a test: an XFAIL F2P counts as a pass."""
    patch = _patch_for(task, tmp_path, _set_mul(XFAIL_HACK))
    v = verifier.verify(task, patch)
    assert v.status == "NO" and not v.resolved and not v.infra_failure and not v.patch_applied and not v.tests
    assert "calc/__init__.py:10:" in v.error and "rule: xfails-tests" in v.error and "protected" in v.error
    assert "calc/__init__.py:10: adds `pytest.xfail(" in v.diagnostics and "xfail" in v.diagnostics
    # without the protection (both passes switched off) the same patch earns a full reward
    monkeypatch.setattr(verifier_mod, "find_violations", lambda *a, **k: [])
    old = verifier_mod.Verifier(timeout_s=verifier.timeout_s, test_timeout_s=verifier.test_timeout_s,
                                root=verifier.root, hardened=False)
    before = old.verify(task, patch)
    assert before.status == "FULL" and before.resolved
    assert {t.status for t in before.tests if t.kind == "FAIL_TO_PASS"} == {"XFAIL"}
    # the hardened runner catches it without the text rule: an xfail raised from non-test code
    now = verifier.verify(task, patch)
    assert now.status == "TAMPERED" and not now.resolved and not now.infra_failure
    assert any("XFailed raised from non-test code at calc/__init__.py" in r for r in now.tamper_reasons)


@pytest.fixture
def cfg_task(task):
    """The demo task with setup.cfg, pyproject.toml and tox.ini (all with pytest sections) committed."""
    repo = task.source_path()
    for name, text in (("setup.cfg", SETUP_CFG.replace("    error\n", "    default\n")),
                       ("pyproject.toml", PYPROJECT), ("tox.ini", TOX_INI)):
        (repo / name).write_text(text)
    sha = commit_all(repo, "config files")
    new = task.model_copy(update={"base_commit": sha})
    return new.with_base_dir(task._base_dir)


FIX = _set_mul("    return a * b")


def test_legit_fix_touching_config_outside_pytest_sections_is_full(cfg_task, verifier, tmp_path):
    script = FIX + (
        "\nsed -i 's/numpy>=1.20/numpy>=1.26/' setup.cfg pyproject.toml tox.ini"
        "\nsed -i 's/^version = 1.0/version = 1.1/' setup.cfg"
    )
    patch = _patch_for(cfg_task, tmp_path, script)
    assert "setup.cfg" in patch and "pyproject.toml" in patch and "tox.ini" in patch
    v = verifier.verify(cfg_task, patch)
    assert v.status == "FULL" and v.resolved, v.diagnostics


@pytest.mark.parametrize("path, edit", [
    ("setup.cfg", "sed -i 's/^python_files = test_\\*.py/python_files = test_*.py check_*.py/' setup.cfg"),
    ("pyproject.toml", "sed -i 's/^python_files = .*/python_files = [\"test_*.py\", \"check_*.py\"]/' pyproject.toml"),
    ("tox.ini", "printf 'python_functions = test_*\\n' >> tox.ini"),
    ("tests/tox.ini", "printf '[pytest]\\npython_functions = test_*\\n' > tests/tox.ini"),
])
def test_pytest_section_change_is_refused_by_the_verifier(cfg_task, verifier, tmp_path, path, edit):
    patch = _patch_for(cfg_task, tmp_path, FIX + "\n" + edit)
    v = verifier.verify(cfg_task, patch)
    assert v.status == "NO" and not v.patch_applied and not v.tests and not v.infra_failure
    assert f"{path}: changes the pytest section" in v.error and "rule: pytest-config" in v.error
    assert f"- {path}: changes the pytest section" in v.diagnostics


def test_fuzzy_config_patch_is_judged_after_applying(cfg_task, verifier, tmp_path):
    """A setup.cfg hunk whose context does not match exactly: applied with fuzz, then checked."""
    def fuzzy(script):
        patch = _patch_for(cfg_task, tmp_path, FIX + "\n" + script)
        assert "\n [flake8]\n" in patch
        return patch.replace("\n [flake8]\n", "\n [flake8-drifted]\n")

    ok = verifier.verify(cfg_task, fuzzy("sed -i 's/^max-line-length = 100/max-line-length = 120/' setup.cfg"))
    assert ok.status == "FULL" and ok.apply_method in ("git-apply-3way", "patch-fuzz"), ok
    bad = verifier.verify(cfg_task, fuzzy("sed -i 's/^    default/    ignore/' setup.cfg"))
    assert bad.status == "NO" and bad.patch_applied and not bad.tests and not bad.infra_failure
    assert "setup.cfg: changes the pytest section" in bad.error


def test_symlinked_config_is_judged_by_what_pytest_reads(task, verifier, tmp_path):
    script = FIX + ("\nprintf '[pytest]\\npython_functions = test_*\\n' > calc/defaults.ini"
                    " && ln -s calc/defaults.ini tox.ini")
    patch = _patch_for(task, tmp_path, script)
    assert "new file mode 120000" in patch
    v = verifier.verify(task, patch)
    assert v.status == "NO" and v.patch_applied and not v.tests
    assert "tox.ini: changes the pytest section" in v.error
