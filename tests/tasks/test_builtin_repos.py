"""Integrity of the built-in repositories: every catalogued repo exists, is green and big enough."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

BUILTIN = Path(__file__).resolve().parents[2] / "src" / "swetrain" / "tasks" / "builtin"
REPOS = BUILTIN / "repos"
CATALOG = BUILTIN / "catalog.yaml"
ROUTES = {
    "A": {"web_backend", "database_storage", "data_science", "data_engineering", "security_auth", "blockchain_web3"},
    "B": {"web_frontend", "mobile_dev", "desktop_gui", "media_graphics", "game_dev", "cms_ecommerce"},
    "C": {"os_system", "iot_embedded", "devops_infra", "devtools_test", "lang_runtime", "pkg_manager_cli"},
}
MIN_TESTS = 25


def _catalog() -> list[dict]:
    entries = yaml.safe_load(CATALOG.read_text())
    assert isinstance(entries, list) and entries, "catalog.yaml must be a non-empty list"
    return entries


ENTRIES = _catalog()
NAMES = [e["name"] for e in ENTRIES]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONPATH", None)
    return env


def test_catalog_fields_are_valid():
    for entry in ENTRIES:
        missing = {"name", "description", "domain_l1", "route", "topics"} - set(entry)
        assert not missing, f"{entry.get('name')}: missing fields {sorted(missing)}"
        assert entry["route"] in ROUTES, f"{entry['name']}: bad route {entry['route']!r}"
        assert entry["domain_l1"] in ROUTES[entry["route"]], (
            f"{entry['name']}: domain {entry['domain_l1']!r} does not belong to route {entry['route']}"
        )
        assert isinstance(entry["topics"], list) and entry["topics"], f"{entry['name']}: topics must be a list"
        assert re.fullmatch(r"[a-z][a-z0-9_]*", entry["name"]), f"bad repo name {entry['name']!r}"
    assert len(set(NAMES)) == len(NAMES), "duplicate names in catalog.yaml"


def test_catalog_coverage():
    domains = {e["domain_l1"] for e in ENTRIES}
    routes = [e["route"] for e in ENTRIES]
    assert len(ENTRIES) >= 12, f"only {len(ENTRIES)} repositories"
    assert len(domains) >= 9, f"only {len(domains)} Domain-L1 families: {sorted(domains)}"
    for route in ROUTES:
        assert routes.count(route) >= 3, f"route {route} has {routes.count(route)} repositories"


def test_catalog_matches_directories():
    on_disk = sorted(p.name for p in REPOS.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    assert on_disk == sorted(NAMES), "repos/ directories and catalog.yaml disagree"
    assert "tests" not in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_repo_layout(name):
    root = REPOS / name
    for rel in ["conftest.py", "pyproject.toml", "README.md", f"{name}/__init__.py"]:
        assert (root / rel).is_file(), f"{name}: missing {rel}"
    tests = sorted((root / "tests").glob("test_*.py"))
    assert tests, f"{name}: no tests/test_*.py"
    assert not (root / name / "tests").exists(), f"{name}: tests must live outside the package"
    lib_lines = sum(len(p.read_text().splitlines()) for p in (root / name).glob("*.py"))
    assert 120 <= lib_lines <= 600, f"{name}: {lib_lines} library lines"
    forbidden = re.compile(r"^\s*(import|from)\s+(requests|numpy|pandas|swetrain|pytest)\b", re.M)
    for path in (root / name).glob("*.py"):
        assert not forbidden.search(path.read_text()), f"{path}: library code must use the standard library only"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_repo_suite_is_green_and_large(name):
    """One pytest run per repo (fresh interpreter, no bytecode or cache written): all green, >= 25 tests."""
    root = REPOS / name
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=root, env=_env(), capture_output=True, text=True, timeout=300,
    )
    tail = f"{run.stdout[-3000:]}\n{run.stderr[-2000:]}"
    assert run.returncode == 0, f"{name}: suite not green\n{tail}"
    summary = re.search(r"(\d+) passed", run.stdout)
    assert summary, f"{name}: no pytest summary\n{tail}"
    assert not re.search(r"\d+ (failed|error|skipped|xfailed|xpassed)", run.stdout), f"{name}: not all tests passed\n{tail}"
    assert int(summary.group(1)) >= MIN_TESTS, f"{name}: only {summary.group(1)} tests"


def test_repo_test_files_are_not_collected_by_swetrain():
    """The repos' own tests live under src/, outside the project's testpaths."""
    root = Path(__file__).resolve().parents[2]
    pyproject = (root / "pyproject.toml").read_text()
    assert 'testpaths = ["tests"]' in pyproject
    assert REPOS.is_relative_to(root / "src")
