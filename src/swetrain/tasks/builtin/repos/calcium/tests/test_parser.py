import pytest

from calcium import ParseError, parse


def test_precedence_mul_over_add():
    assert parse("1+2*3") == ("bin", "+", ("num", 1), ("bin", "*", ("num", 2), ("num", 3)))


def test_left_associative_subtraction():
    assert parse("8-3-2") == ("bin", "-", ("bin", "-", ("num", 8), ("num", 3)), ("num", 2))


def test_power_right_associative():
    assert parse("2**3**2") == ("bin", "**", ("num", 2), ("bin", "**", ("num", 3), ("num", 2)))


def test_unary_minus_binds_looser_than_power():
    assert parse("-2**2") == ("neg", ("bin", "**", ("num", 2), ("num", 2)))


def test_parentheses():
    assert parse("(1+2)*3")[2] == ("bin", "+", ("num", 1), ("num", 2))


def test_float_literal():
    assert parse("2.5") == ("num", 2.5)


def test_call_args():
    assert parse("max(1, x, 3)") == ("call", "max", [("num", 1), ("var", "x"), ("num", 3)])


def test_call_no_args():
    assert parse("f()") == ("call", "f", [])


def test_assignment_right_nested():
    assert parse("a = b = 2") == ("assign", "a", ("assign", "b", ("num", 2)))


def test_conditional():
    assert parse("x > 1 ? 10 : 20") == ("cond", ("bin", ">", ("var", "x"), ("num", 1)), ("num", 10), ("num", 20))


def test_logical_precedence():
    assert parse("a || b && c")[0:2] == ("bin", "||")


def test_comparison_below_arithmetic():
    assert parse("1 + 1 == 2")[1] == "=="


def test_missing_paren():
    with pytest.raises(ParseError, match="expected"):
        parse("(1+2")


def test_trailing_tokens():
    with pytest.raises(ParseError) as info:
        parse("1 2")
    assert info.value.pos == 2


def test_empty_input():
    with pytest.raises(ParseError, match="end of input"):
        parse("")


def test_dangling_operator():
    with pytest.raises(ParseError):
        parse("1 +")
