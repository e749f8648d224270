import pytest

from layoutbox import FocusChain, Rect, elide, hit_test, wrap_words

ITEMS = [("back", Rect(0, 0, 100, 100), 0), ("btn", Rect(10, 10, 20, 20), 1), ("tip", Rect(15, 15, 50, 10), 1)]


def test_hit_highest_z():
    assert hit_test((12, 12), ITEMS) == "btn"


def test_hit_equal_z_later_wins():
    assert hit_test((16, 16), ITEMS) == "tip"


def test_hit_background_and_miss():
    assert hit_test((90, 90), ITEMS) == "back"
    assert hit_test((100, 5), ITEMS) is None


WIDGETS = {"ok": Rect(50, 100, 10, 10), "name": Rect(0, 0, 10, 10), "email": Rect(0, 20, 10, 10), "cancel": Rect(80, 100, 10, 10)}


def test_focus_order_reading():
    assert FocusChain(WIDGETS).order == ["name", "email", "ok", "cancel"]


def test_focus_next_from_nothing_and_wrap():
    fc = FocusChain(WIDGETS)
    assert [fc.next() for _ in range(5)] == ["name", "email", "ok", "cancel", "name"]


def test_focus_previous_from_nothing():
    assert FocusChain(WIDGETS).previous() == "cancel"


def test_focus_previous_wraps():
    fc = FocusChain(WIDGETS)
    fc.focus("name")
    assert fc.previous() == "cancel"


def test_focus_no_wrap_stays():
    fc = FocusChain(WIDGETS)
    fc.focus("cancel")
    assert fc.next(wrap=False) == "cancel"
    fc.focus("name")
    assert fc.previous(wrap=False) == "name"


def test_focus_skips_disabled():
    fc = FocusChain(WIDGETS, disabled={"email"})
    fc.focus("name")
    assert fc.next() == "ok"


def test_focus_disabled_and_unknown():
    fc = FocusChain(WIDGETS, disabled={"ok"})
    with pytest.raises(ValueError):
        fc.focus("ok")
    with pytest.raises(KeyError):
        fc.focus("zzz")


def test_focus_all_disabled():
    assert FocusChain({"a": Rect(0, 0, 1, 1)}, disabled={"a"}).next() is None


def test_elide_fits():
    assert elide("hello", 5) == "hello"


def test_elide_right():
    assert elide("hello world", 8) == "hello w…"


def test_elide_left():
    assert elide("hello world", 8) != elide("hello world", 8, "left")
    assert elide("hello world", 8, "left") == "…o world"


def test_elide_middle_extra_on_left():
    assert elide("abcdefghij", 6, "middle") == "abc…ij"


def test_elide_tiny_width():
    assert elide("abcdef", 1) == "…"
    assert elide("abcdef", 0) == ""


def test_elide_errors():
    with pytest.raises(ValueError):
        elide("abc", -1)
    with pytest.raises(ValueError):
        elide("abc", 2, "center")


def test_wrap_basic():
    assert wrap_words("the quick brown fox", 10) == ["the quick", "brown fox"]


def test_wrap_exact_width_line():
    assert wrap_words("aaaa bbbbb", 10) == ["aaaa bbbbb"]


def test_wrap_long_word_split():
    assert wrap_words("hi abcdefghij", 4) == ["hi", "abcd", "efgh", "ij"]


def test_wrap_collapses_spaces_and_empty():
    assert wrap_words("  a   b  ", 5) == ["a b"]
    assert wrap_words("", 5) == []


def test_wrap_bad_width():
    with pytest.raises(ValueError):
        wrap_words("a", 0)
