import pytest

from layoutbox import Rect


def test_negative_size_rejected():
    with pytest.raises(ValueError):
        Rect(0, 0, -1, 5)


def test_edges_and_area():
    r = Rect(2, 3, 10, 4)
    assert r.right == 12 and r.bottom == 7 and r.area == 40


def test_contains_edges():
    r = Rect(0, 0, 10, 5)
    assert r.contains(0, 0) and r.contains(9, 4)
    assert not r.contains(10, 0) and not r.contains(0, 5) and not r.contains(-1, 2)


def test_inset_uniform():
    assert Rect(0, 0, 100, 50).inset(10) == Rect(10, 10, 80, 30)


def test_inset_two_values_css_like():
    assert Rect(0, 0, 100, 50).inset(10, 5) == Rect(10, 5, 80, 40)


def test_inset_four_values():
    assert Rect(0, 0, 100, 50).inset(1, 2, 3, 4) == Rect(1, 2, 96, 44)


def test_inset_never_negative():
    assert Rect(0, 0, 10, 10).inset(8) == Rect(8, 8, 0, 0)


def test_intersect_overlap():
    assert Rect(0, 0, 10, 10).intersect(Rect(5, 6, 10, 10)) == Rect(5, 6, 5, 4)


def test_intersect_disjoint_zero():
    assert Rect(0, 0, 2, 2).intersect(Rect(5, 5, 1, 1)).area == 0


def test_center_rounds_down():
    assert Rect(0, 0, 5, 3).center() == (2, 1)


def test_align_center():
    assert Rect(0, 0, 100, 50).align(20, 10) == Rect(40, 20, 20, 10)


def test_align_corners():
    assert Rect(10, 10, 100, 50).align(20, 10, "right", "bottom") == Rect(90, 50, 20, 10)
    assert Rect(10, 10, 100, 50).align(20, 10, "left", "top") == Rect(10, 10, 20, 10)


def test_align_shrinks_oversized():
    assert Rect(0, 0, 10, 10).align(50, 5, "left", "center") == Rect(0, 2, 10, 5)


def test_align_bad_value():
    with pytest.raises(ValueError):
        Rect(0, 0, 1, 1).align(1, 1, "middle")
