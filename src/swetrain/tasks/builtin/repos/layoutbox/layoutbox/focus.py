"""Keyboard focus order and pointer hit testing."""
from __future__ import annotations

from .geometry import Rect


def hit_test(point: tuple[int, int], items: list[tuple[str, Rect, int]]) -> str | None:
    """Name of the item under ``point``; items are ``(name, rect, z)``, the highest ``z`` wins and
    on equal ``z`` the later item (drawn last) wins."""
    best: tuple[int, int, str] | None = None
    for order, (name, rect, z) in enumerate(items):
        if rect.contains(*point):
            key = (z, order, name)
            if best is None or key > best:
                best = key
    return None if best is None else best[2]


class FocusChain:
    """Tab order over widgets: sorted by top edge, then left edge (reading order); disabled ones are skipped."""

    def __init__(self, widgets: dict[str, Rect], disabled: set[str] | None = None) -> None:
        self.disabled = set(disabled or ())
        self.order = sorted(widgets, key=lambda n: (widgets[n].y, widgets[n].x, n))
        self.current: str | None = None

    def enabled(self) -> list[str]:
        return [n for n in self.order if n not in self.disabled]

    def focus(self, name: str) -> None:
        if name not in self.order:
            raise KeyError(name)
        if name in self.disabled:
            raise ValueError(f"{name} is disabled")
        self.current = name

    def _step(self, delta: int, wrap: bool) -> str | None:
        names = self.enabled()
        if not names:
            self.current = None
            return None
        if self.current not in names:
            self.current = names[0] if delta > 0 else names[-1]
            return self.current
        idx = names.index(self.current) + delta
        if wrap:
            idx %= len(names)
        elif idx < 0 or idx >= len(names):
            return self.current
        self.current = names[idx]
        return self.current

    def next(self, wrap: bool = True) -> str | None:
        """Move to the next enabled widget (Tab); with no focus, go to the first."""
        return self._step(1, wrap)

    def previous(self, wrap: bool = True) -> str | None:
        """Move to the previous enabled widget (Shift+Tab); with no focus, go to the last."""
        return self._step(-1, wrap)
