"""Unified diff rendering, parsing and application."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .diff import diff_lines

_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    """A malformed diff or a hunk that does not apply."""


@dataclass
class Hunk:
    """``old_start``/``new_start`` are 1-based; ``lines`` keep their ``' '``/``'-'``/``'+'`` prefix."""

    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[str] = field(default_factory=list)

    def header(self) -> str:
        return f"@@ -{_range(self.old_start, self.old_len)} +{_range(self.new_start, self.new_len)} @@"


def _range(start: int, length: int) -> str:
    return str(start) if length == 1 else f"{start},{length}"


def unified_diff(a: list[str], b: list[str], context: int = 3, old_name: str = "a", new_name: str = "b") -> str:
    """Render a unified diff (``---``/``+++`` headers and ``@@`` hunks); empty string when equal.

    Changes separated by more than ``2 * context`` unchanged lines go in separate hunks.
    An empty side of a hunk starts at the line *before* it (``-0,0`` for insertion into an empty file).
    """
    ops = diff_lines(a, b)
    changed = [k for k, op in enumerate(ops) if op.kind != " "]
    if not changed:
        return ""
    groups: list[list[int]] = [[changed[0], changed[0]]]
    for k in changed[1:]:
        if k - groups[-1][1] - 1 > 2 * context:
            groups.append([k, k])
        else:
            groups[-1][1] = k
    out = [f"--- {old_name}", f"+++ {new_name}"]
    for first, last in groups:
        lo, hi = max(0, first - context), min(len(ops) - 1, last + context)
        chunk = ops[lo:hi + 1]
        old_lines = [op for op in chunk if op.kind != "+"]
        new_lines = [op for op in chunk if op.kind != "-"]
        old_start = old_lines[0].old_no if old_lines else _before(ops, lo, "old")
        new_start = new_lines[0].new_no if new_lines else _before(ops, lo, "new")
        hunk = Hunk(old_start, len(old_lines), new_start, len(new_lines), [op.kind + op.text for op in chunk])
        out.append(hunk.header())
        out.extend(hunk.lines)
    return "\n".join(out) + "\n"


def _before(ops: list, index: int, side: str) -> int:
    for op in reversed(ops[:index]):
        no = op.old_no if side == "old" else op.new_no
        if no is not None:
            return no
    return 0


def parse_unified(text: str) -> list[Hunk]:
    """Parse the hunks of a unified diff (file headers are skipped); lengths are checked."""
    hunks: list[Hunk] = []
    current: Hunk | None = None
    for line in text.splitlines():
        if line.startswith("--- ") or line.startswith("+++ "):
            if current is None or _complete(current):
                continue
        m = _HEADER.match(line)
        if m:
            if current is not None and not _complete(current):
                raise PatchError(f"hunk {current.header()} is truncated")
            old_len = int(m.group(2)) if m.group(2) is not None else 1
            new_len = int(m.group(4)) if m.group(4) is not None else 1
            current = Hunk(int(m.group(1)), old_len, int(m.group(3)), new_len)
            hunks.append(current)
            continue
        if current is None:
            continue
        if line[:1] not in (" ", "-", "+"):
            raise PatchError(f"bad hunk line {line!r}")
        current.lines.append(line)
    if current is not None and not _complete(current):
        raise PatchError(f"hunk {current.header()} is truncated")
    return hunks


def _complete(h: Hunk) -> bool:
    old = sum(1 for l in h.lines if l[0] != "+")
    new = sum(1 for l in h.lines if l[0] != "-")
    return old == h.old_len and new == h.new_len


def apply_hunks(lines: list[str], hunks: list[Hunk]) -> list[str]:
    """Apply hunks (in order) to ``lines``; context and deleted lines must match exactly."""
    result: list[str] = []
    pos = 0  # next unconsumed index in ``lines``
    for hunk in hunks:
        start = hunk.old_start - 1 if hunk.old_len > 0 else hunk.old_start
        if start < pos:
            raise PatchError(f"hunk {hunk.header()} overlaps the previous one")
        result.extend(lines[pos:start])
        pos = start
        for line in hunk.lines:
            kind, text = line[0], line[1:]
            if kind == "+":
                result.append(text)
                continue
            if pos >= len(lines) or lines[pos] != text:
                raise PatchError(f"hunk {hunk.header()} does not match at line {pos + 1}")
            if kind == " ":
                result.append(text)
            pos += 1
    result.extend(lines[pos:])
    return result
