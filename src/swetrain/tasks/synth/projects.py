"""How to test a project: test paths, pytest options, extra test dependencies.

Known PyPI projects carry profiles measured in ``docs/../shared/design/task-sources.md`` (their
own test layout, the extra packages their suites import, options that skip hanging tests). Any
other project gets a profile guessed from its tree (``tests``/``test`` folders or ``test_*.py``
files) plus its ``test``/``tests``/``testing`` extras.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

# Projects pytest itself imports: a mutant there breaks the test runner, not the project.
PYTEST_DEPENDENCIES = frozenset({"pytest", "pluggy", "iniconfig", "packaging", "pygments", "colorama",
                                 "exceptiongroup", "tomli", "setuptools", "pip", "wheel"})


@dataclass(frozen=True)
class Profile:
    """Test recipe of one project. ``paths`` are relative to the project root."""

    paths: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    extra_deps: tuple[str, ...] = ()
    domain: str | None = None  # Repository Domain L1 of the taxonomy
    include: tuple[str, ...] = ()  # folders/files eligible for mutation (default: all non-test code)
    extras: tuple[str, ...] = ()  # the project's own optional-dependency groups to install
    notes: str = ""
    known: bool = False  # measured profile (its extra_deps are complete; extras are not guessed)


KNOWN: dict[str, Profile] = {
    "toolz": Profile(paths=("toolz",), domain="data_engineering", include=("toolz",)),
    "cachetools": Profile(paths=("tests",), domain="database_storage"),
    "tabulate": Profile(paths=("test",), domain="pkg_manager_cli"),
    "sqlparse": Profile(paths=("tests",), domain="database_storage"),
    "marshmallow": Profile(paths=("tests",), extra_deps=("simplejson",), domain="web_backend"),
    "h11": Profile(paths=("h11/tests",), domain="web_backend", include=("h11",)),
    "werkzeug": Profile(paths=("tests",), options=("-m", "not dev_server"),
                        extra_deps=("ephemeral-port-reserve",), domain="web_backend"),
    "pyflakes": Profile(paths=("pyflakes/test",), domain="devtools_test", include=("pyflakes",)),
    "click": Profile(paths=("tests",), domain="pkg_manager_cli"),
    "uncertainties": Profile(paths=("tests",), options=("--ignore=tests/test_performance.py",),
                             extra_deps=("numpy",), domain="data_science"),
    "semver": Profile(paths=("tests",), options=("-o", "addopts=--import-mode=importlib"), domain="pkg_manager_cli"),
    "humanize": Profile(paths=("tests",), extra_deps=("freezegun", "pytest-benchmark"), domain="docs_knowledge"),
    "jinja2": Profile(paths=("tests",), extra_deps=("trio",), domain="web_frontend"),
    "itsdangerous": Profile(paths=("tests",), extra_deps=("freezegun",), domain="security_auth"),
    "tomlkit": Profile(paths=("tests",), extra_deps=("PyYAML",), domain="devops_infra"),
    "xmltodict": Profile(paths=("tests",), domain="data_engineering"),
    "mistune": Profile(paths=("tests",), domain="docs_knowledge"),
    "inflection": Profile(paths=("test_inflection.py",), domain="docs_knowledge"),
    "simpleeval": Profile(paths=("test_simpleeval.py",), domain="lang_runtime"),
}

KNOWN = {k: replace(v, known=True) for k, v in KNOWN.items()}


def normalize_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def known_profile(name: str) -> Profile | None:
    key = normalize_name(name)
    for k, prof in KNOWN.items():
        if normalize_name(k) == key:
            return prof
    return None


def guess_profile(root: str | Path, name: str | None = None) -> Profile:
    """A profile for ``root``: the known one for ``name`` or one guessed from the tree."""
    root = Path(root)
    prof = known_profile(name) if name else None
    if prof is not None:
        return prof
    paths: list[str] = []
    for cand in ("tests", "test", "testing"):
        if (root / cand).is_dir():
            paths.append(cand)
            break
    if not paths:
        for pkg in sorted(p for p in root.iterdir() if p.is_dir()):
            for cand in ("tests", "test"):
                if (pkg / cand).is_dir() and any((pkg / cand).rglob("test*.py")):
                    paths.append(f"{pkg.name}/{cand}")
    if not paths:
        paths = sorted(p.name for p in root.glob("test_*.py")) + sorted(p.name for p in root.glob("*_test.py"))
    if not paths and (root / "src").is_dir():
        paths = sorted(p.relative_to(root).as_posix() for p in (root / "src").rglob("tests") if p.is_dir())
    return Profile(paths=tuple(paths))


def with_overrides(prof: Profile, *, paths=None, options=None, extra_deps=None) -> Profile:
    changes = {}
    if paths:
        changes["paths"] = tuple(paths)
    if options:
        changes["options"] = tuple(options)
    if extra_deps:
        changes["extra_deps"] = tuple(dict.fromkeys([*prof.extra_deps, *extra_deps]))
    return replace(prof, **changes) if changes else prof
