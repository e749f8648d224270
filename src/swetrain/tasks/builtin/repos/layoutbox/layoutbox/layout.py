"""Horizontal and vertical box layouts with minimum sizes, maximum sizes and stretch factors."""
from __future__ import annotations

from dataclasses import dataclass

from .geometry import Rect


class LayoutError(ValueError):
    """The children cannot fit in the available space."""


@dataclass
class Widget:
    """A child of a box layout: size limits along the layout axis and a stretch factor (0 = fixed)."""

    name: str
    min_size: int = 0
    max_size: int | None = None
    stretch: int = 1
    visible: bool = True

    def __post_init__(self) -> None:
        if self.min_size < 0 or self.stretch < 0:
            raise ValueError(f"{self.name}: min_size and stretch must be non-negative")
        if self.max_size is not None and self.max_size < self.min_size:
            raise ValueError(f"{self.name}: max_size below min_size")


def distribute(total: int, widgets: list[Widget]) -> list[int]:
    """Split ``total`` pixels among widgets.

    Every widget first gets its ``min_size``; the rest is shared in proportion to ``stretch``
    (integer shares, leftover pixels go one each to the earliest stretchable widgets); a widget
    never exceeds ``max_size`` and space it cannot take is redistributed to the others.
    Raises ``LayoutError`` when the minimum sizes do not fit.
    """
    sizes = [w.min_size for w in widgets]
    remaining = total - sum(sizes)
    if remaining < 0:
        raise LayoutError(f"need {sum(sizes)} px but only {total} available")
    active = [i for i, w in enumerate(widgets) if w.stretch > 0 and (w.max_size is None or sizes[i] < w.max_size)]
    while remaining > 0 and active:
        weight = sum(widgets[i].stretch for i in active)
        shares = [remaining * widgets[i].stretch // weight for i in active]
        leftover = remaining - sum(shares)
        for k in range(leftover):
            shares[k] += 1
        given = 0
        still = []
        for i, share in zip(active, shares):
            cap = widgets[i].max_size
            room = share if cap is None else min(share, cap - sizes[i])
            sizes[i] += room
            given += room
            if cap is None or sizes[i] < cap:
                still.append(i)
        remaining -= given
        if given == 0:
            break
        active = still
    return sizes


def box_layout(area: Rect, widgets: list[Widget], horizontal: bool = True, spacing: int = 0, padding: int = 0) -> dict[str, Rect]:
    """Lay out the visible widgets in a row (or column) inside ``area``; returns name -> rect.

    ``padding`` is removed from every side first, ``spacing`` separates adjacent visible widgets;
    the cross axis always takes the full inner size. Hidden widgets get no rect.
    """
    if spacing < 0 or padding < 0:
        raise ValueError("spacing and padding must be non-negative")
    inner = area.inset(padding)
    shown = [w for w in widgets if w.visible]
    if not shown:
        return {}
    axis_total = inner.w if horizontal else inner.h
    gaps = spacing * (len(shown) - 1)
    sizes = distribute(axis_total - gaps, shown)
    result: dict[str, Rect] = {}
    pos = inner.x if horizontal else inner.y
    for widget, size in zip(shown, sizes):
        if horizontal:
            result[widget.name] = Rect(pos, inner.y, size, inner.h)
        else:
            result[widget.name] = Rect(inner.x, pos, inner.w, size)
        pos += size + spacing
    return result
