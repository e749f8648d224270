import pytest

from calcium import LexError, tokenize


def kinds(src):
    return [(t.kind, t.text) for t in tokenize(src)]


def test_numbers_and_ops():
    assert kinds("1+2.5") == [("num", "1"), ("op", "+"), ("num", "2.5"), ("end", "")]


def test_leading_dot_number():
    assert kinds(".5")[0] == ("num", ".5")


def test_second_dot_ends_number():
    assert [t.text for t in tokenize("1.2.3")][:2] == ["1.2", ".3"]


def test_names_with_underscore_digits():
    assert kinds("_a1 b")[:2] == [("name", "_a1"), ("name", "b")]


def test_two_char_operators_win():
    assert [t.text for t in tokenize("a**b<=c!=d&&e||f==g>=h")][1::2][:7] == ["**", "<=", "!=", "&&", "||", "==", ">="]


def test_positions():
    assert [t.pos for t in tokenize(" ab + 3")] == [1, 4, 6, 7]


def test_comment_skipped():
    assert kinds("1 # comment\n+ 2") == [("num", "1"), ("op", "+"), ("num", "2"), ("end", "")]


def test_bad_character():
    with pytest.raises(LexError) as info:
        tokenize("1 $ 2")
    assert info.value.pos == 2
