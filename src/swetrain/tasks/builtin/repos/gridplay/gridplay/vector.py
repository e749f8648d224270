"""Immutable 2D vectors."""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Vec2:
    """A 2D vector with the usual arithmetic."""

    x: float
    y: float

    def __add__(self, other: "Vec2") -> "Vec2":
        return Vec2(self.x + other.x, self.y + other.y)

    def __sub__(self, other: "Vec2") -> "Vec2":
        return Vec2(self.x - other.x, self.y - other.y)

    def __mul__(self, k: float) -> "Vec2":
        return Vec2(self.x * k, self.y * k)

    def __neg__(self) -> "Vec2":
        return Vec2(-self.x, -self.y)

    def dot(self, other: "Vec2") -> float:
        return self.x * other.x + self.y * other.y

    def cross(self, other: "Vec2") -> float:
        """z-component of the 3D cross product (positive when ``other`` is counter-clockwise)."""
        return self.x * other.y - self.y * other.x

    def length(self) -> float:
        return math.hypot(self.x, self.y)

    def distance(self, other: "Vec2") -> float:
        return (self - other).length()

    def manhattan(self, other: "Vec2") -> float:
        return abs(self.x - other.x) + abs(self.y - other.y)

    def normalized(self) -> "Vec2":
        """Unit vector in the same direction; raises ``ValueError`` for the zero vector."""
        n = self.length()
        if n == 0:
            raise ValueError("cannot normalize the zero vector")
        return Vec2(self.x / n, self.y / n)

    def clamp_length(self, max_len: float) -> "Vec2":
        """Scale down to ``max_len`` if longer; shorter vectors are unchanged."""
        n = self.length()
        if n <= max_len or n == 0:
            return self
        return self * (max_len / n)

    def rotate90(self, clockwise: bool = False) -> "Vec2":
        """Rotate by 90 degrees (counter-clockwise by default, y axis up)."""
        return Vec2(self.y, -self.x) if clockwise else Vec2(-self.y, self.x)

    def lerp(self, other: "Vec2", t: float) -> "Vec2":
        """Linear interpolation: ``t=0`` gives self, ``t=1`` gives other."""
        return Vec2(self.x + (other.x - self.x) * t, self.y + (other.y - self.y) * t)

    def reflect(self, normal: "Vec2") -> "Vec2":
        """Reflect off a surface with unit ``normal``: ``v - 2 (v.n) n``."""
        return self - normal * (2 * self.dot(normal))
