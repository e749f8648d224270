"""Integer rectangles in screen coordinates (y grows downwards)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rect:
    """A rectangle with integer position and non-negative size."""

    x: int
    y: int
    w: int
    h: int

    def __post_init__(self) -> None:
        if self.w < 0 or self.h < 0:
            raise ValueError(f"negative size {self.w}x{self.h}")

    @property
    def right(self) -> int:
        return self.x + self.w

    @property
    def bottom(self) -> int:
        return self.y + self.h

    @property
    def area(self) -> int:
        return self.w * self.h

    def contains(self, px: int, py: int) -> bool:
        """Point test; the right and bottom edges are outside."""
        return self.x <= px < self.right and self.y <= py < self.bottom

    def inset(self, left: int, top: int | None = None, right: int | None = None, bottom: int | None = None) -> "Rect":
        """Shrink by margins (CSS-like defaults: one value for all sides); never below zero size."""
        top = left if top is None else top
        right = left if right is None else right
        bottom = top if bottom is None else bottom
        return Rect(self.x + left, self.y + top, max(0, self.w - left - right), max(0, self.h - top - bottom))

    def intersect(self, other: "Rect") -> "Rect":
        """Overlap of two rectangles (zero-size at the clipped corner when disjoint)."""
        x1, y1 = max(self.x, other.x), max(self.y, other.y)
        x2, y2 = min(self.right, other.right), min(self.bottom, other.bottom)
        return Rect(x1, y1, max(0, x2 - x1), max(0, y2 - y1))

    def center(self) -> tuple[int, int]:
        """Integer centre (rounded down)."""
        return self.x + self.w // 2, self.y + self.h // 2

    def align(self, w: int, h: int, horizontal: str = "center", vertical: str = "center") -> "Rect":
        """Place a ``w x h`` box inside this one: horizontal ``left|center|right``, vertical ``top|center|bottom``.

        The box is shrunk to fit if larger.
        """
        if horizontal not in ("left", "center", "right") or vertical not in ("top", "center", "bottom"):
            raise ValueError(f"bad alignment {horizontal!r}/{vertical!r}")
        w, h = min(w, self.w), min(h, self.h)
        if horizontal == "left":
            dx = 0
        elif horizontal == "right":
            dx = self.w - w
        else:
            dx = (self.w - w) // 2
        if vertical == "top":
            dy = 0
        elif vertical == "bottom":
            dy = self.h - h
        else:
            dy = (self.h - h) // 2
        return Rect(self.x + dx, self.y + dy, w, h)
