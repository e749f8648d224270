"""Freed allocator memory goes back to the OS (glibc malloc_trim), and the releaser rate-limits it."""

from __future__ import annotations

import platform
import time

import pytest

from swetrain.policy.memory import MemoryReleaser, release_freed_memory


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_freed_heap_memory_returns_to_the_os():
    # 300 MB in 64 KB blocks (below glibc's mmap threshold: they live in the heap), then every
    # block freed but one in 64, so live blocks pin the heap and the free pages stay resident
    blocks = [bytearray(64 * 1024) for _ in range(4800)]
    for b in blocks:
        b[::4096] = b"\x01" * len(b[::4096])  # touch every page
    kept = blocks[::64]
    del blocks
    before = _rss_mb()
    assert release_freed_memory() is True
    after = _rss_mb()
    assert before - after > 150, (before, after)
    assert sum(len(b) for b in kept) == 75 * 64 * 1024  # the live blocks survive


def test_the_releaser_runs_at_most_once_per_interval():
    releaser = MemoryReleaser(min_interval_s=0.2)
    assert releaser.maybe_release() is False  # the interval starts at construction
    time.sleep(0.25)
    assert releaser.maybe_release() is True and releaser.maybe_release() is False
    assert releaser.calls == 1
