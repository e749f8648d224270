"""Compiled decision-record signals: which observable positive signals (s+) fire in a text.

A signal is a case-insensitive regular expression. When it starts with a word character it is
anchored at a word start (so ``bug`` does not fire inside ``debug``); the end is left open so
stems such as ``compatib`` match ``compatibility``; signals write ``\\b`` themselves when needed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


def compile_signal(pattern: str) -> re.Pattern[str]:
    prefix = r"\b" if re.match(r"\w", pattern) else ""
    return re.compile(prefix + "(?:" + pattern + ")", re.IGNORECASE)


def _top_level_alternation(pattern: str) -> bool:
    depth = 0
    escaped = False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return True
    return False


def literal_anchor(pattern: str) -> str | None:
    """A lower-case literal every match must contain (the pattern's leading plain run), or None.

    Used as a cheap substring pre-check before running the regular expression.
    """
    if _top_level_alternation(pattern):
        return None
    m = re.match(r"[A-Za-z0-9 _'-]+", pattern)
    if not m:
        return None
    run = m.group(0)
    rest = pattern[len(run):]
    if rest[:1] in ("?", "*", "{"):
        run = run[:-1]
    run = run.lower()
    return run if len(run.strip()) >= 3 else None


@dataclass(frozen=True)
class SignalSet:
    """The compiled signals of one label (L1 family, L2 record or scale level)."""

    label: str
    patterns: tuple[str, ...]
    compiled: tuple[re.Pattern[str], ...]
    anchors: tuple[str | None, ...]

    @classmethod
    def of(cls, label: str, patterns: Iterable[str]) -> SignalSet:
        pats = tuple(dict.fromkeys(patterns))
        return cls(label=label, patterns=pats, compiled=tuple(compile_signal(p) for p in pats),
                   anchors=tuple(literal_anchor(p) for p in pats))

    def hits(self, text: str, lower: str | None = None) -> list[str]:
        """The patterns (as written in the decision record) that occur in ``text``.

        ``lower`` may pass ``text.lower()`` when the caller already has it.
        """
        if not text:
            return []
        low = lower if lower is not None else text.lower()
        return [p for p, rx, a in zip(self.patterns, self.compiled, self.anchors) if (a is None or a in low) and rx.search(text)]
