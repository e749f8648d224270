"""Line diffs from a longest-common-subsequence table."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Op:
    """One diff line: ``kind`` is ``" "`` (kept), ``"-"`` (deleted) or ``"+"`` (inserted)."""

    kind: str
    text: str
    old_no: int | None  # 1-based line number in the old text
    new_no: int | None  # 1-based line number in the new text


def _table(a: list[str], b: list[str]) -> list[list[int]]:
    n, m = len(a), len(b)
    t = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if a[i] == b[j]:
                t[i][j] = t[i + 1][j + 1] + 1
            else:
                t[i][j] = max(t[i + 1][j], t[i][j + 1])
    return t


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two line lists."""
    return _table(a, b)[0][0]


def diff_lines(a: list[str], b: list[str]) -> list[Op]:
    """Edit script turning ``a`` into ``b``; at a tie deletions come before insertions."""
    t = _table(a, b)
    ops: list[Op] = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            ops.append(Op(" ", a[i], i + 1, j + 1))
            i += 1
            j += 1
        elif t[i + 1][j] >= t[i][j + 1]:
            ops.append(Op("-", a[i], i + 1, None))
            i += 1
        else:
            ops.append(Op("+", b[j], None, j + 1))
            j += 1
    while i < len(a):
        ops.append(Op("-", a[i], i + 1, None))
        i += 1
    while j < len(b):
        ops.append(Op("+", b[j], None, j + 1))
        j += 1
    return ops


def similarity(a: list[str], b: list[str]) -> float:
    """``2 * LCS / (len(a) + len(b))``; two empty inputs are identical (1.0)."""
    total = len(a) + len(b)
    if total == 0:
        return 1.0
    return 2 * lcs_length(a, b) / total
