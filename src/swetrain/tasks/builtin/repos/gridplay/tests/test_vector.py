import math

import pytest

from gridplay import Vec2


def test_add_sub():
    assert Vec2(1, 2) + Vec2(3, 4) == Vec2(4, 6)
    assert Vec2(1, 2) - Vec2(3, 5) == Vec2(-2, -3)


def test_scale_and_negate():
    assert Vec2(1, -2) * 3 == Vec2(3, -6)
    assert -Vec2(1, -2) == Vec2(-1, 2)


def test_dot_and_cross():
    assert Vec2(1, 2).dot(Vec2(3, 4)) == 11
    assert Vec2(1, 0).cross(Vec2(0, 1)) == 1
    assert Vec2(0, 1).cross(Vec2(1, 0)) == -1


def test_length_and_distance():
    assert Vec2(3, 4).length() == 5
    assert Vec2(1, 1).distance(Vec2(4, 5)) == 5


def test_manhattan():
    assert Vec2(1, 1).manhattan(Vec2(-2, 5)) == 7


def test_normalized():
    n = Vec2(0, 5).normalized()
    assert n == Vec2(0, 1)


def test_normalized_zero():
    with pytest.raises(ValueError):
        Vec2(0, 0).normalized()


def test_clamp_length():
    assert Vec2(6, 8).clamp_length(5) == Vec2(3, 4)
    assert Vec2(3, 4).clamp_length(5) == Vec2(3, 4)
    assert Vec2(0, 0).clamp_length(0) == Vec2(0, 0)


def test_rotate90_both_ways():
    assert Vec2(1, 0).rotate90() == Vec2(0, 1)
    assert Vec2(1, 0).rotate90(clockwise=True) == Vec2(0, -1)


def test_lerp():
    a, b = Vec2(0, 0), Vec2(10, -4)
    assert a.lerp(b, 0) == a and a.lerp(b, 1) == b
    assert a.lerp(b, 0.25) == Vec2(2.5, -1)


def test_reflect():
    assert Vec2(1, -1).reflect(Vec2(0, 1)) == Vec2(1, 1)


def test_reflect_preserves_length():
    v = Vec2(3, -7)
    r = v.reflect(Vec2(1, 1).normalized())
    assert math.isclose(r.length(), v.length())
