import pytest

from gridplay import AABB, Vec2, circle_hits_aabb, circles_overlap, sweep_aabb


def test_box_size_must_be_positive():
    with pytest.raises(ValueError):
        AABB(0, 0, 0, 1)
    with pytest.raises(ValueError):
        AABB(0, 0, 1, -1)


def test_box_edges_and_center():
    b = AABB(1, 2, 4, 6)
    assert b.right == 5 and b.bottom == 8 and b.center == Vec2(3, 5)


def test_contains_half_open():
    b = AABB(0, 0, 10, 10)
    assert b.contains(Vec2(0, 0))
    assert not b.contains(Vec2(10, 5))
    assert not b.contains(Vec2(5, 10))
    assert b.contains(Vec2(9.99, 9.99))


def test_overlap():
    assert AABB(0, 0, 2, 2).overlaps(AABB(1, 1, 2, 2))


def test_touching_is_not_overlap():
    assert not AABB(0, 0, 2, 2).overlaps(AABB(2, 0, 2, 2))
    assert not AABB(0, 0, 2, 2).overlaps(AABB(0, 2, 2, 2))


def test_overlap_symmetric_contained():
    big, small = AABB(0, 0, 10, 10), AABB(4, 4, 1, 1)
    assert big.overlaps(small) and small.overlaps(big)


def test_intersection():
    assert AABB(0, 0, 4, 4).intersection(AABB(2, 1, 4, 4)) == AABB(2, 1, 2, 3)
    assert AABB(0, 0, 1, 1).intersection(AABB(5, 5, 1, 1)) is None


def test_union():
    assert AABB(0, 0, 1, 1).union(AABB(3, -2, 1, 1)) == AABB(0, -2, 4, 3)


def test_penetration_pushes_along_smaller_axis():
    a = AABB(3, 0, 4, 4)   # overlaps b by 1 in x, 4 in y
    b = AABB(0, 0, 4, 4)
    assert a.penetration(b) == Vec2(1, 0)


def test_penetration_negative_direction():
    a = AABB(0, 3, 4, 4)
    b = AABB(0, 5, 4, 4)
    assert a.penetration(b) == Vec2(0, -2)


def test_penetration_apart():
    assert AABB(0, 0, 1, 1).penetration(AABB(3, 3, 1, 1)) == Vec2(0, 0)


def test_circles_overlap_and_touch():
    assert circles_overlap(Vec2(0, 0), 1, Vec2(1.5, 0), 1)
    assert circles_overlap(Vec2(0, 0), 1, Vec2(2, 0), 1)
    assert not circles_overlap(Vec2(0, 0), 1, Vec2(2.01, 0), 1)


def test_circle_box():
    box = AABB(0, 0, 2, 2)
    assert circle_hits_aabb(Vec2(1, 1), 0.1, box)
    assert circle_hits_aabb(Vec2(3, 1), 1, box)
    assert not circle_hits_aabb(Vec2(3, 3), 1, box), "corner distance is sqrt(2) > 1"


def test_sweep_hits_midway():
    t = sweep_aabb(AABB(0, 0, 1, 1), Vec2(10, 0), AABB(5, 0, 1, 1))
    assert t == pytest.approx(0.4)


def test_sweep_misses_vertically():
    assert sweep_aabb(AABB(0, 0, 1, 1), Vec2(10, 0), AABB(5, 3, 1, 1)) is None


def test_sweep_too_short():
    assert sweep_aabb(AABB(0, 0, 1, 1), Vec2(2, 0), AABB(5, 0, 1, 1)) is None


def test_sweep_negative_velocity():
    t = sweep_aabb(AABB(10, 0, 1, 1), Vec2(-10, 0), AABB(0, 0, 1, 1))
    assert t == pytest.approx(0.9)


def test_sweep_already_overlapping():
    assert sweep_aabb(AABB(0, 0, 2, 2), Vec2(1, 1), AABB(1, 1, 2, 2)) == 0.0


def test_sweep_moving_away():
    assert sweep_aabb(AABB(3, 0, 1, 1), Vec2(5, 0), AABB(0, 0, 1, 1)) is None
