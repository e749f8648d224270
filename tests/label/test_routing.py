from __future__ import annotations

import pytest

from swetrain.label.routing import ROUTE_WHITELIST, UNASSIGNED_L1, route_of


def test_route_whitelist_is_exactly_the_papers() -> None:
    assert ROUTE_WHITELIST["A"] == ("web_backend", "database_storage", "data_science", "data_engineering", "security_auth", "blockchain_web3")
    assert ROUTE_WHITELIST["B"] == ("web_frontend", "mobile_dev", "desktop_gui", "media_graphics", "game_dev", "cms_ecommerce")
    assert ROUTE_WHITELIST["C"] == ("os_system", "iot_embedded", "devops_infra", "devtools_test", "lang_runtime", "pkg_manager_cli")
    assert UNASSIGNED_L1 == ("docs_knowledge", "non_coding", "other")


def test_every_domain_l1_has_a_route(taxonomy) -> None:
    seen = {"A": 0, "B": 0, "C": 0, None: 0}
    for l1 in taxonomy.families("domain"):
        seen[route_of(l1)] += 1
    assert seen == {"A": 6, "B": 6, "C": 6, None: 3}
    assert route_of("web_backend") == "A" and route_of("game_dev") == "B" and route_of("pkg_manager_cli") == "C"
    assert route_of("docs_knowledge") is None


def test_unknown_domain_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown Domain L1 'webdev'"):
        route_of("webdev")
