import math

from guardpass import PasswordPolicy, entropy_bits, strength
from guardpass.policy import longest_run


def test_good_password_passes():
    assert PasswordPolicy().check("Tr0ub4dor&x") == []


def test_too_short_boundary():
    p = PasswordPolicy(min_length=8)
    assert "too_short" in p.check("Abcde12")
    assert "too_short" not in p.check("Abcdef12")


def test_too_long_boundary():
    p = PasswordPolicy(max_length=10)
    assert "too_long" not in p.check("Abcdefg123")
    assert "too_long" in p.check("Abcdefg1234")


def test_missing_classes():
    assert PasswordPolicy().check("abcdefgh") == ["no_upper", "no_digit"]


def test_missing_lower():
    assert PasswordPolicy().check("ABCDEFG1") == ["no_lower"]


def test_symbol_only_when_required():
    assert "no_symbol" not in PasswordPolicy().check("Abcdefg1")
    assert "no_symbol" in PasswordPolicy(require_symbol=True).check("Abcdefg1")
    assert "no_symbol" not in PasswordPolicy(require_symbol=True).check("Abcdefg1!")


def test_repeated_run_limit():
    p = PasswordPolicy(max_repeat=3)
    assert "repeated" not in p.check("Abbbcd12")
    assert "repeated" in p.check("Abbbbcd12")


def test_banned_word_case_insensitive():
    assert "banned" in PasswordPolicy().check("MyPassWord1")


def test_contains_username():
    assert "contains_username" in PasswordPolicy().check("xxBobxx12A", username="bob")


def test_short_username_ignored():
    assert "contains_username" not in PasswordPolicy().check("Abxx1234", username="ab")


def test_is_valid():
    assert PasswordPolicy().is_valid("Zebra-42x")
    assert not PasswordPolicy().is_valid("zebra")


def test_longest_run():
    assert longest_run("") == 0
    assert longest_run("abc") == 1
    assert longest_run("aabbbbc") == 4
    assert longest_run("abccc") == 3


def test_entropy_empty():
    assert entropy_bits("") == 0.0


def test_entropy_lower_only():
    assert entropy_bits("abcd") == 4 * math.log2(26)


def test_entropy_mixed_classes():
    assert entropy_bits("aA1!") == 4 * math.log2(26 + 26 + 10 + 32)


def test_entropy_unicode_pool():
    assert entropy_bits("é") == math.log2(100)


def test_strength_levels():
    assert strength("abc") == "weak"
    assert strength("abcdefghij") == "fair"          # 47 bits
    assert strength("abcdefghijklmn") == "strong"     # 65.8 bits
    assert strength("aA1!aA1!aA1!aA1!") == "excellent"


def test_strength_weak_fair_boundary():
    assert strength("a" * 9) == "fair"  # 42.3 bits
    assert strength("a" * 8) == "weak"  # 37.6 bits
