"""Deterministic routing from Repository Domain L1 to three engineering contexts (paper §B.4).

A = service/data/security, B = user-facing applications, C = systems, tooling and runtimes.
``docs_knowledge``, ``non_coding`` and ``other`` are unassigned (route ``None``).
"""

from __future__ import annotations

from typing import Literal

Route = Literal["A", "B", "C"]

ROUTE_WHITELIST: dict[str, tuple[str, ...]] = {
    "A": ("web_backend", "database_storage", "data_science", "data_engineering", "security_auth", "blockchain_web3"),
    "B": ("web_frontend", "mobile_dev", "desktop_gui", "media_graphics", "game_dev", "cms_ecommerce"),
    "C": ("os_system", "iot_embedded", "devops_infra", "devtools_test", "lang_runtime", "pkg_manager_cli"),
}
UNASSIGNED_L1: tuple[str, ...] = ("docs_knowledge", "non_coding", "other")
ROUTE_NAMES: dict[str, str] = {
    "A": "service/data/security",
    "B": "user-facing applications",
    "C": "systems, tooling, runtimes",
}
_ROUTE_OF: dict[str, Route] = {l1: r for r, l1s in ROUTE_WHITELIST.items() for l1 in l1s}  # type: ignore[misc]


def route_of(domain_l1: str) -> Route | None:
    """Route of a Domain L1 label: "A", "B", "C", or None for unassigned families.

    Raises ValueError for a name that is not one of the 21 Domain L1 families.
    """
    if domain_l1 in _ROUTE_OF:
        return _ROUTE_OF[domain_l1]
    if domain_l1 in UNASSIGNED_L1:
        return None
    known = sorted([*_ROUTE_OF, *UNASSIGNED_L1])
    raise ValueError(f"unknown Domain L1 {domain_l1!r}; expected one of {', '.join(known)}")
