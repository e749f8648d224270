"""Give memory that the C allocator holds after ``free`` back to the operating system.

A local policy's rollouts allocate and free KV caches of every size, from several threads (the
agent chains and torch's). glibc keeps freed heap memory in its arenas for reuse, and the pieces
between live blocks cannot be reused for larger caches, so the resident size of a long run climbs
far above what is alive: a SmolLM2 quickstart reached 20 GB of RSS in 13 minutes on a 23 GB
machine, while an evaluation of 4 tasks held 0.6 GB of live tensors in 2.7 GB of RSS and
``malloc_trim`` brought it to 1.2 GB (docs/policy.md, "Memory"). :func:`release_freed_memory`
calls glibc's ``malloc_trim(0)``; :class:`MemoryReleaser` does so at most once per interval, for
hot paths such as the end of every generated turn. Elsewhere (musl, macOS, Windows) both are no-ops.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import threading
import time

__all__ = ["MemoryReleaser", "release_freed_memory"]


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none."""
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_freed_memory() -> bool:
    """Return the allocator's free memory to the OS (glibc ``malloc_trim(0)``); True if it did."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


class MemoryReleaser:
    """:func:`release_freed_memory`, at most once per ``min_interval_s`` seconds (thread-safe)."""

    def __init__(self, min_interval_s: float = 5.0) -> None:
        self.min_interval_s = float(min_interval_s)
        self._last = time.monotonic()
        self._lock = threading.Lock()
        self.calls = 0

    def maybe_release(self) -> bool:
        """Release when the interval has passed since the last release; True if it released."""
        now = time.monotonic()
        with self._lock:
            if now - self._last < self.min_interval_s:
                return False
            self._last = now
            self.calls += 1
        release_freed_memory()
        return True
