"""Rectangular grid boards: neighbours, flood fill, shortest paths and line wins."""
from __future__ import annotations

from collections import deque
from typing import Any, Iterator

Cell = tuple[int, int]  # (row, col)


class Board:
    """A ``rows x cols`` grid of values (``None`` = empty). Cells are ``(row, col)``."""

    def __init__(self, rows: int, cols: int, fill: Any = None) -> None:
        if rows <= 0 or cols <= 0:
            raise ValueError(f"board size must be positive, got {rows}x{cols}")
        self.rows = rows
        self.cols = cols
        self.cells = [[fill for _ in range(cols)] for _ in range(rows)]

    @classmethod
    def from_strings(cls, lines: list[str], empty: str = ".") -> "Board":
        """Build a board from equal-length strings; ``empty`` characters become ``None``."""
        if not lines or any(len(l) != len(lines[0]) for l in lines):
            raise ValueError("lines must be non-empty and of equal length")
        board = cls(len(lines), len(lines[0]))
        for r, line in enumerate(lines):
            for c, ch in enumerate(line):
                board.cells[r][c] = None if ch == empty else ch
        return board

    def in_bounds(self, cell: Cell) -> bool:
        r, c = cell
        return 0 <= r < self.rows and 0 <= c < self.cols

    def get(self, cell: Cell) -> Any:
        if not self.in_bounds(cell):
            raise IndexError(f"cell {cell} outside {self.rows}x{self.cols} board")
        return self.cells[cell[0]][cell[1]]

    def set(self, cell: Cell, value: Any) -> None:
        if not self.in_bounds(cell):
            raise IndexError(f"cell {cell} outside {self.rows}x{self.cols} board")
        self.cells[cell[0]][cell[1]] = value

    def neighbors(self, cell: Cell, diagonal: bool = False) -> list[Cell]:
        """In-bounds neighbours in the order up, down, left, right (then the four diagonals)."""
        r, c = cell
        steps = [(-1, 0), (1, 0), (0, -1), (0, 1)]
        if diagonal:
            steps += [(-1, -1), (-1, 1), (1, -1), (1, 1)]
        return [(r + dr, c + dc) for dr, dc in steps if self.in_bounds((r + dr, c + dc))]

    def flood_fill(self, start: Cell, value: Any) -> int:
        """Replace the 4-connected region of ``start``'s value with ``value``; return cells changed."""
        target = self.get(start)
        if target == value:
            return 0
        stack = [start]
        changed = 0
        while stack:
            cell = stack.pop()
            if self.get(cell) != target:
                continue
            self.set(cell, value)
            changed += 1
            stack.extend(self.neighbors(cell))
        return changed

    def shortest_path(self, start: Cell, goal: Cell, walls: str = "#") -> list[Cell] | None:
        """BFS path of cells from ``start`` to ``goal`` inclusive, avoiding cells whose value is in ``walls``."""
        for cell in (start, goal):
            if not self.in_bounds(cell) or (self.get(cell) is not None and self.get(cell) in walls):
                return None
        prev: dict[Cell, Cell | None] = {start: None}
        queue = deque([start])
        while queue:
            cell = queue.popleft()
            if cell == goal:
                path = []
                node: Cell | None = cell
                while node is not None:
                    path.append(node)
                    node = prev[node]
                return path[::-1]
            for nxt in self.neighbors(cell):
                v = self.get(nxt)
                if nxt in prev or (v is not None and v in walls):
                    continue
                prev[nxt] = cell
                queue.append(nxt)
        return None

    def count(self, value: Any) -> int:
        return sum(row.count(value) for row in self.cells)

    def __iter__(self) -> Iterator[tuple[Cell, Any]]:
        for r in range(self.rows):
            for c in range(self.cols):
                yield (r, c), self.cells[r][c]


def connect_winner(board: Board, n: int) -> Any:
    """Value that has ``n`` in a row (horizontal, vertical or diagonal), or ``None``.

    If several lines exist, the one whose first cell comes first in row-major order wins.
    """
    if n < 2:
        raise ValueError("n must be at least 2")
    for (r, c), value in board:
        if value is None:
            continue
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            end = (r + dr * (n - 1), c + dc * (n - 1))
            if not board.in_bounds(end):
                continue
            if all(board.get((r + dr * k, c + dc * k)) == value for k in range(1, n)):
                return value
    return None
