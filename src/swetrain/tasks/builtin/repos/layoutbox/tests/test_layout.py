import pytest

from layoutbox import LayoutError, Rect, Widget, box_layout, distribute


def test_widget_validation():
    with pytest.raises(ValueError):
        Widget("a", min_size=-1)
    with pytest.raises(ValueError):
        Widget("a", min_size=10, max_size=5)


def test_distribute_equal_stretch():
    assert distribute(90, [Widget("a"), Widget("b"), Widget("c")]) == [30, 30, 30]


def test_distribute_proportional():
    assert distribute(100, [Widget("a", stretch=1), Widget("b", stretch=3)]) == [25, 75]


def test_distribute_leftover_to_earliest():
    assert distribute(10, [Widget("a"), Widget("b"), Widget("c")]) == [4, 3, 3]


def test_distribute_respects_min():
    assert distribute(100, [Widget("a", min_size=40), Widget("b")]) == [70, 30]


def test_distribute_fixed_widget():
    assert distribute(100, [Widget("a", min_size=20, stretch=0), Widget("b")]) == [20, 80]


def test_distribute_max_redistributes():
    assert distribute(100, [Widget("a", max_size=10), Widget("b")]) == [10, 90]


def test_distribute_all_capped_leaves_space():
    assert distribute(100, [Widget("a", max_size=10), Widget("b", max_size=20)]) == [10, 20]


def test_distribute_exact_min_fit():
    assert distribute(30, [Widget("a", min_size=10), Widget("b", min_size=20)]) == [10, 20]


def test_distribute_overflow():
    with pytest.raises(LayoutError, match="need 31"):
        distribute(30, [Widget("a", min_size=11), Widget("b", min_size=20)])


def test_distribute_total_conserved():
    ws = [Widget("a", stretch=2), Widget("b", stretch=3, max_size=25), Widget("c", stretch=5, min_size=7)]
    assert sum(distribute(101, ws)) == 101


def test_box_horizontal():
    out = box_layout(Rect(0, 0, 100, 20), [Widget("a"), Widget("b")])
    assert out == {"a": Rect(0, 0, 50, 20), "b": Rect(50, 0, 50, 20)}


def test_box_vertical_with_spacing():
    out = box_layout(Rect(0, 0, 30, 100), [Widget("a"), Widget("b")], horizontal=False, spacing=10)
    assert out == {"a": Rect(0, 0, 30, 45), "b": Rect(0, 55, 30, 45)}


def test_box_padding():
    out = box_layout(Rect(10, 10, 100, 40), [Widget("a")], padding=5)
    assert out == {"a": Rect(15, 15, 90, 30)}


def test_box_hidden_widget_takes_no_space():
    out = box_layout(Rect(0, 0, 100, 10), [Widget("a"), Widget("h", visible=False), Widget("b")], spacing=10)
    assert set(out) == {"a", "b"} and out["b"] == Rect(55, 0, 45, 10)


def test_box_all_hidden():
    assert box_layout(Rect(0, 0, 10, 10), [Widget("a", visible=False)]) == {}


def test_box_negative_spacing():
    with pytest.raises(ValueError):
        box_layout(Rect(0, 0, 10, 10), [Widget("a")], spacing=-1)
