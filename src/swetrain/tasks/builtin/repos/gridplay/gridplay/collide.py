"""Axis-aligned boxes and circles."""
from __future__ import annotations

from dataclasses import dataclass

from .vector import Vec2


@dataclass(frozen=True)
class AABB:
    """Axis-aligned box from ``(x, y)`` with width ``w`` and height ``h`` (both > 0)."""

    x: float
    y: float
    w: float
    h: float

    def __post_init__(self) -> None:
        if self.w <= 0 or self.h <= 0:
            raise ValueError(f"box size must be positive, got {self.w}x{self.h}")

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h

    @property
    def center(self) -> Vec2:
        return Vec2(self.x + self.w / 2, self.y + self.h / 2)

    def contains(self, p: Vec2) -> bool:
        """Point inside, edges included on the left/top and excluded on the right/bottom."""
        return self.x <= p.x < self.right and self.y <= p.y < self.bottom

    def overlaps(self, other: "AABB") -> bool:
        """True when the interiors intersect (touching edges do not count)."""
        return self.x < other.right and other.x < self.right and self.y < other.bottom and other.y < self.bottom

    def intersection(self, other: "AABB") -> "AABB | None":
        if not self.overlaps(other):
            return None
        x1, y1 = max(self.x, other.x), max(self.y, other.y)
        x2, y2 = min(self.right, other.right), min(self.bottom, other.bottom)
        return AABB(x1, y1, x2 - x1, y2 - y1)

    def union(self, other: "AABB") -> "AABB":
        x1, y1 = min(self.x, other.x), min(self.y, other.y)
        x2, y2 = max(self.right, other.right), max(self.bottom, other.bottom)
        return AABB(x1, y1, x2 - x1, y2 - y1)

    def penetration(self, other: "AABB") -> Vec2:
        """Smallest translation moving ``self`` out of ``other`` along one axis (zero if apart)."""
        inter = self.intersection(other)
        if inter is None:
            return Vec2(0, 0)
        dx = inter.w if self.center.x >= other.center.x else -inter.w
        dy = inter.h if self.center.y >= other.center.y else -inter.h
        if inter.w < inter.h:
            return Vec2(dx, 0)
        return Vec2(0, dy)


def circles_overlap(c1: Vec2, r1: float, c2: Vec2, r2: float) -> bool:
    """True when two circles intersect or touch."""
    dx, dy = c1.x - c2.x, c1.y - c2.y
    return dx * dx + dy * dy <= (r1 + r2) ** 2


def circle_hits_aabb(center: Vec2, radius: float, box: AABB) -> bool:
    """True when the circle intersects or touches the box."""
    nx = min(max(center.x, box.x), box.right)
    ny = min(max(center.y, box.y), box.bottom)
    dx, dy = center.x - nx, center.y - ny
    return dx * dx + dy * dy <= radius * radius


def sweep_aabb(moving: AABB, velocity: Vec2, target: AABB) -> float | None:
    """Fraction ``t`` in [0, 1] of ``velocity`` at which ``moving`` first touches ``target``, or ``None``."""
    def axis(pos: float, size: float, vel: float, tpos: float, tsize: float) -> tuple[float, float]:
        if vel == 0:
            if pos + size <= tpos or tpos + tsize <= pos:
                return float("inf"), float("-inf")
            return float("-inf"), float("inf")
        t1 = (tpos - (pos + size)) / vel
        t2 = (tpos + tsize - pos) / vel
        return (min(t1, t2), max(t1, t2))

    ex, lx = axis(moving.x, moving.w, velocity.x, target.x, target.w)
    ey, ly = axis(moving.y, moving.h, velocity.y, target.y, target.h)
    enter, leave = max(ex, ey), min(lx, ly)
    if enter > leave or enter > 1 or leave < 0:
        return None
    return max(enter, 0.0)
