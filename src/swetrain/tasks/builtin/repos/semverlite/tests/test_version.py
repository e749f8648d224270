import pytest

from semverlite import Version, VersionError


def test_parse_basic():
    v = Version.parse("1.2.3")
    assert (v.major, v.minor, v.patch, v.pre, v.build) == (1, 2, 3, (), ())


def test_parse_v_prefix_pre_and_build():
    v = Version.parse("v1.0.0-rc.1+build.7")
    assert v.pre == ("rc", "1") and v.build == ("build", "7")


def test_str_roundtrip():
    for s in ["0.0.1", "1.2.3-alpha.1", "1.0.0+sha.abc", "2.0.0-rc.2+b1"]:
        assert str(Version.parse(s)) == s


def test_parse_errors():
    for bad in ["1.2", "1.2.3.4", "1.a.3", "01.2.3", "1.2.3-", "1.2.3-a..b", ""]:
        with pytest.raises(VersionError):
            Version.parse(bad)


def test_zero_component_allowed():
    assert Version.parse("0.0.0") == Version(0, 0, 0)


def test_negative_rejected():
    with pytest.raises(VersionError):
        Version(1, -1, 0)


def test_ordering_numeric_not_lexical():
    assert Version.parse("1.10.0") > Version.parse("1.9.0")
    assert Version.parse("2.0.0") > Version.parse("1.99.99")


def test_prerelease_below_release():
    assert Version.parse("1.0.0-rc.1") < Version.parse("1.0.0")


def test_prerelease_chain_semver_spec():
    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
             "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"]
    parsed = [Version.parse(s) for s in chain]
    assert sorted(reversed(parsed)) == parsed


def test_build_ignored_in_equality():
    assert Version.parse("1.0.0+a") == Version.parse("1.0.0+b")
    assert len({Version.parse("1.0.0+a"), Version.parse("1.0.0")}) == 1


def test_is_prerelease():
    assert Version.parse("1.0.0-x").is_prerelease and not Version.parse("1.0.0").is_prerelease


def test_bump():
    v = Version.parse("1.2.3")
    assert str(v.bump("major")) == "2.0.0"
    assert str(v.bump("minor")) == "1.3.0"
    assert str(v.bump("patch")) == "1.2.4"


def test_bump_prerelease_patch():
    assert str(Version.parse("1.2.3-rc.1").bump("patch")) == "1.2.3"


def test_bump_unknown():
    with pytest.raises(ValueError):
        Version(1).bump("micro")
