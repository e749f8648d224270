"""Fitting text into fixed-width cells (labels, list rows)."""
from __future__ import annotations


def elide(text: str, width: int, mode: str = "right", ellipsis: str = "…") -> str:
    """Shorten ``text`` to at most ``width`` characters, marking the cut with ``ellipsis``.

    ``mode`` is ``right`` (keep the start), ``left`` (keep the end) or ``middle`` (keep both ends,
    the extra character on the left side).
    """
    if width < 0:
        raise ValueError("width must be non-negative")
    if mode not in ("right", "left", "middle"):
        raise ValueError(f"unknown elide mode {mode!r}")
    if len(text) <= width:
        return text
    if width <= len(ellipsis):
        return ellipsis[:width]
    keep = width - len(ellipsis)
    if mode == "right":
        return text[:keep] + ellipsis
    if mode == "left":
        return ellipsis + text[len(text) - keep:]
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head] + ellipsis + (text[len(text) - tail:] if tail else "")


def wrap_words(text: str, width: int) -> list[str]:
    """Greedy word wrap to lines of at most ``width`` characters; words longer than ``width`` are split."""
    if width <= 0:
        raise ValueError("width must be positive")
    lines: list[str] = []
    line = ""
    for word in text.split():
        while len(word) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:width])
            word = word[width:]
        if not word:
            continue
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines
