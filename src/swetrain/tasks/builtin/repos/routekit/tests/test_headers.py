import pytest

from routekit import parse_accept, parse_content_type, reason_phrase, status_class


def test_reason_known():
    assert reason_phrase(404) == "Not Found"
    assert reason_phrase(429) == "Too Many Requests"


def test_reason_unknown_uses_class():
    assert reason_phrase(418) == "Client Error"
    assert reason_phrase(299) == "Success"


def test_status_class_bounds():
    assert status_class(100) == 1
    assert status_class(599) == 5


def test_status_class_out_of_range():
    for bad in (99, 600):
        with pytest.raises(ValueError):
            status_class(bad)


def test_content_type_params():
    assert parse_content_type("Text/HTML; Charset=UTF-8") == ("text/html", {"charset": "UTF-8"})


def test_content_type_quoted_value():
    assert parse_content_type('multipart/form-data; boundary="abc def"')[1] == {"boundary": "abc def"}


def test_content_type_ignores_bare_param():
    assert parse_content_type("text/plain; flag")[1] == {}


def test_accept_sorted_by_q():
    got = parse_accept("text/html;q=0.5, application/json")
    assert got == [("application/json", 1.0), ("text/html", 0.5)]


def test_accept_specific_before_wildcard_on_tie():
    got = parse_accept("*/*, text/*, text/html")
    assert [m for m, _ in got] == ["text/html", "text/*", "*/*"]


def test_accept_header_order_on_full_tie():
    assert [m for m, _ in parse_accept("b/b, a/a")] == ["b/b", "a/a"]


def test_accept_drops_q_zero_and_bad_q():
    assert parse_accept("a/a;q=0, b/b;q=x, c/c;q=0.1") == [("c/c", 0.1)]


def test_accept_clamps_q():
    assert parse_accept("a/a;q=3") == [("a/a", 1.0)]
