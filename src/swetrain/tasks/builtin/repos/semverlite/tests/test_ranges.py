import pytest

from semverlite import Range, VersionError, max_satisfying


def ok(rng, *versions):
    r = Range(rng)
    return [r.contains(v) for v in versions]


def test_exact():
    assert ok("1.2.3", "1.2.3", "1.2.4") == [True, False]


def test_comparators():
    assert ok(">=1.2.0", "1.1.9", "1.2.0", "9.0.0") == [False, True, True]
    assert ok(">1.2.0", "1.2.0", "1.2.1") == [False, True]
    assert ok("<2.0.0", "1.9.9", "2.0.0") == [True, False]
    assert ok("<=2.0.0", "2.0.0", "2.0.1") == [True, False]


def test_intersection():
    assert ok(">=1.0.0 <1.5.0", "0.9.0", "1.4.9", "1.5.0") == [False, True, False]


def test_union():
    assert ok("<1.0.0 || >=2.0.0", "0.5.0", "1.5.0", "2.0.0") == [True, False, True]


def test_caret_major():
    assert ok("^1.2.3", "1.2.2", "1.2.3", "1.9.0", "2.0.0") == [False, True, True, False]


def test_caret_zero_minor():
    assert ok("^0.2.3", "0.2.3", "0.2.9", "0.3.0") == [True, True, False]


def test_caret_zero_zero():
    assert ok("^0.0.3", "0.0.3", "0.0.4") == [True, False]


def test_caret_partial():
    assert ok("^1", "1.0.0", "1.9.9", "2.0.0") == [True, True, False]
    assert ok("^0.0", "0.0.5", "0.1.0") == [True, False]


def test_tilde():
    assert ok("~1.2.3", "1.2.3", "1.2.9", "1.3.0") == [True, True, False]
    assert ok("~1.2", "1.2.0", "1.3.0") == [True, False]
    assert ok("~1", "1.9.0", "2.0.0") == [True, False]


def test_x_ranges():
    assert ok("1.x", "1.0.0", "1.9.9", "2.0.0") == [True, True, False]
    assert ok("1.2.*", "1.2.7", "1.3.0") == [True, False]
    assert ok("*", "0.0.0", "99.1.1") == [True, True]


def test_empty_range_is_any():
    assert ok("", "3.1.4") == [True]


def test_prerelease_excluded_by_default():
    assert ok(">=1.0.0", "1.5.0-beta") == [False]
    assert Range(">=1.0.0").contains("1.5.0-beta", include_prerelease=True)


def test_prerelease_allowed_when_named():
    assert ok(">=1.2.3-alpha", "1.2.3-beta", "1.2.4-beta") == [True, False]


def test_contains_operator():
    assert "1.2.3" in Range("^1.0.0")


def test_bad_range():
    with pytest.raises(VersionError):
        Range("^a.b")


def test_max_satisfying():
    vs = ["1.0.0", "1.2.0", "1.10.0", "2.0.0", "1.11.0-rc"]
    assert str(max_satisfying(vs, "^1.0.0")) == "1.10.0"


def test_max_satisfying_none():
    assert max_satisfying(["1.0.0"], ">=2.0.0") is None
