"""Package-index metadata as part of a repository card (issue 33).

A repository on disk gives its card's package metadata from its manifests (``pyproject.toml``,
``package.json``, ... in :mod:`swetrain.label.cards`). For a repository that is not on disk, the same
fields can come from the package index the project publishes to: the PyPI JSON document's ``info``
(summary, keywords, ``Topic ::`` / ``Intended Audience ::`` / ``Environment ::`` / ``Framework ::``
classifiers, ``requires_dist``), the npm registry's package document (description, keywords,
dependencies), or, for other languages, the Debian archive's package stanza (``apt-cache show``:
the one-line description, ``Homepage``, ``Depends``). This module turns such a document into card fields and checks that the package
really is the repository's (its project URLs name the repository); it reads no network itself.
``tools/build_packaged_cards.py`` fetches the documents once to build the packaged cards file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from swetrain.label.cards import DEPS_MAX, RepoCard

CLASSIFIER_PREFIXES = ("Topic", "Intended Audience", "Environment", "Framework")
KEYWORDS_MAX = 20
_DEP = re.compile(r"\s*([A-Za-z0-9@][A-Za-z0-9._\-/]*)")


def _keywords(value: Any) -> list[str]:
    if isinstance(value, list):
        words = [str(k) for k in value]
    else:
        text = str(value or "")
        words = re.split(r"[,;]" if ("," in text or ";" in text) else r"\s+", text)
    return list(dict.fromkeys(w.strip() for w in words if w.strip()))[:KEYWORDS_MAX]


def _requirement_name(spec: str) -> str:
    """``"numpy>=1.2; extra == 'x'"`` -> ``""`` (extras are optional); ``"numpy>=1.2"`` -> ``"numpy"``."""
    if "extra ==" in spec or "extra==" in spec:
        return ""
    m = _DEP.match(spec or "")
    return m.group(1).lower() if m else ""


def from_pypi(info: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The card's ``package`` and ``dependencies`` from a PyPI JSON document's ``info``."""
    package = {
        "name": str(info.get("name") or ""),
        "summary": str(info.get("summary") or "").strip(),
        "keywords": _keywords(info.get("keywords")),
        "classifiers": [str(c) for c in info.get("classifiers") or [] if str(c).startswith(CLASSIFIER_PREFIXES)],
    }
    deps = dict.fromkeys(d for d in (_requirement_name(str(s)) for s in info.get("requires_dist") or []) if d)
    return package, tuple(deps)[:DEPS_MAX]


def from_npm(doc: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The card's ``package`` and ``dependencies`` from an npm registry document (one version's)."""
    package = {"name": str(doc.get("name") or ""), "summary": str(doc.get("description") or "").strip(),
               "keywords": _keywords(doc.get("keywords"))}
    deps = doc.get("dependencies") if isinstance(doc.get("dependencies"), Mapping) else {}
    return package, tuple(str(d).lower() for d in deps)[:DEPS_MAX]


def parse_debian(text: str) -> dict[str, str]:
    """The fields of the first stanza of ``apt-cache show`` output (continuation lines kept, one per line)."""
    fields: dict[str, str] = {}
    key = ""
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        if line[0] in " \t" and key:
            fields[key] += "\n" + line.strip()
        elif ":" in line:
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    return fields


def from_debian(fields: Mapping[str, str]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The card's ``package`` and ``dependencies`` from a Debian package stanza (:func:`parse_debian`):
    the one-line description as the summary (the long one is the packager's prose, left out)."""
    summary = str(fields.get("Description") or fields.get("Description-en") or "").split("\n")[0].strip()
    package = {"name": str(fields.get("Package") or ""), "summary": summary, "keywords": []}
    deps = [_DEP.match(d).group(1).lower() for d in str(fields.get("Depends") or "").split(",") if _DEP.match(d)]
    return package, tuple(dict.fromkeys(deps))[:DEPS_MAX]


def project_urls(doc: Mapping[str, Any]) -> str:
    """Every URL a PyPI ``info`` or npm document gives for the project, space-separated, lower case."""
    urls: list[str] = [str(doc.get("home_page") or ""), str(doc.get("homepage") or ""), str(doc.get("Homepage") or "")]
    if isinstance(doc.get("project_urls"), Mapping):
        urls += [str(u) for u in doc["project_urls"].values()]
    repo = doc.get("repository")
    urls.append(str(repo.get("url") or "") if isinstance(repo, Mapping) else str(repo or ""))
    return " ".join(u for u in urls if u).lower()


def names_repository(doc: Mapping[str, Any], repo: str) -> bool:
    """True when the document's project URLs point at ``owner/name`` on GitHub, or at a GitHub
    repository of the same name (a project that moved to another owner)."""
    owner, _, name = repo.lower().partition("/")
    urls = project_urls(doc) + " "
    if f"github.com/{owner}/{name}" in urls:
        return True
    return bool(re.search(r"github\.com[/:][^/\s]+/" + re.escape(name) + r"(?:\.git)?(?:[/\s#?]|$)", urls))


def with_package(card: RepoCard, package: Mapping[str, Any], dependencies: tuple[str, ...], source: str) -> RepoCard:
    """``card`` with the index's package metadata; ``source`` is appended to the card's source."""
    return replace(card, package=dict(package), dependencies=dependencies,
                   source=f"{card.source}+{source}" if card.source else source)
