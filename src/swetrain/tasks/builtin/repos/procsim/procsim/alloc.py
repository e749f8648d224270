"""A contiguous memory allocator with first-fit / best-fit placement and coalescing free."""
from __future__ import annotations


class AllocError(MemoryError):
    """No free block is large enough, or a bad free."""


class Allocator:
    """Manages addresses ``0 .. size-1``; requests are rounded up to ``align``."""

    def __init__(self, size: int, strategy: str = "first", align: int = 1) -> None:
        if size <= 0 or align <= 0:
            raise ValueError("size and align must be positive")
        if strategy not in ("first", "best"):
            raise ValueError(f"unknown strategy {strategy!r}")
        self.size = size
        self.strategy = strategy
        self.align = align
        self.free_blocks: list[tuple[int, int]] = [(0, size)]  # (start, length), sorted by start
        self.used: dict[int, int] = {}  # start -> length

    def _round(self, n: int) -> int:
        return (n + self.align - 1) // self.align * self.align

    def malloc(self, n: int) -> int:
        """Reserve ``n`` bytes (rounded up to ``align``) and return the start address."""
        if n <= 0:
            raise ValueError("allocation size must be positive")
        need = self._round(n)
        fits = [(i, b) for i, b in enumerate(self.free_blocks) if b[1] >= need]
        if not fits:
            raise AllocError(f"no block of {need} bytes (free: {self.free_total()})")
        if self.strategy == "first":
            i, (start, length) = fits[0]
        else:
            i, (start, length) = min(fits, key=lambda f: (f[1][1], f[1][0]))
        if length == need:
            del self.free_blocks[i]
        else:
            self.free_blocks[i] = (start + need, length - need)
        self.used[start] = need
        return start

    def free(self, addr: int) -> None:
        """Release the block at ``addr`` and merge it with adjacent free blocks."""
        if addr not in self.used:
            raise AllocError(f"address {addr} is not allocated")
        length = self.used.pop(addr)
        blocks = sorted(self.free_blocks + [(addr, length)])
        merged: list[tuple[int, int]] = []
        for start, size in blocks:
            if merged and merged[-1][0] + merged[-1][1] == start:
                merged[-1] = (merged[-1][0], merged[-1][1] + size)
            else:
                merged.append((start, size))
        self.free_blocks = merged

    def free_total(self) -> int:
        return sum(length for _, length in self.free_blocks)

    def largest_free(self) -> int:
        return max((length for _, length in self.free_blocks), default=0)

    def fragmentation(self) -> float:
        """``1 - largest_free / free_total`` (0 when memory is full or the free space is one block)."""
        total = self.free_total()
        if total == 0:
            return 0.0
        return 1 - self.largest_free() / total
