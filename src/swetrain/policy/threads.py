"""Torch intra-op thread policy.

On a small machine (2 cores here) torch's default of one intra-op thread per core collapses
2-20x as soon as anything else competes for the cores: sandboxed test runs, Ray workers, other
policies. swetrain therefore runs torch with **one intra-op thread per process by default**.

Override with the environment variable ``SWETRAIN_TORCH_THREADS``:

* an integer ``N >= 1``: use N intra-op threads;
* ``auto``: leave torch's own default (one per core) untouched, for a machine you do not share.
"""

from __future__ import annotations

import logging
import os

ENV_VAR = "SWETRAIN_TORCH_THREADS"
DEFAULT_THREADS = 1

log = logging.getLogger(__name__)

_configured: int | None = None


def _env_threads(var: str) -> int | str | None:
    """``var`` as a thread count: an integer >= 1, ``"auto"``, or None when unset."""
    raw = os.environ.get(var, "").strip()
    if not raw:
        return None
    if raw.lower() == "auto":
        return "auto"
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{var}={raw!r}: expected a positive integer or 'auto'")
    return value


def requested_threads(default: int = DEFAULT_THREADS) -> int | None:
    """Threads asked for by ``SWETRAIN_TORCH_THREADS`` (None for ``auto``), else ``default``."""
    value = _env_threads(ENV_VAR)
    if value is None:
        return default
    return None if value == "auto" else int(value)


def configure_torch_threads(default: int = DEFAULT_THREADS, *, force: bool = False) -> int:
    """Set torch's intra-op threads (1 unless ``SWETRAIN_TORCH_THREADS`` says otherwise).

    Idempotent: only the first call (or one with ``force=True``) changes torch and logs.
    Returns the number of intra-op threads torch now uses.
    """
    global _configured
    import torch

    if _configured is not None and not force:
        return torch.get_num_threads()
    wanted = requested_threads(default)
    if wanted is not None and torch.get_num_threads() != wanted:
        torch.set_num_threads(wanted)
    _configured = torch.get_num_threads()
    source = f"{ENV_VAR}={os.environ[ENV_VAR]}" if os.environ.get(ENV_VAR) else "default"
    log.info(
        "torch intra-op threads = %d (%s; swetrain uses 1 thread per process because sandboxes and "
        "workers share the cores; set %s=N or 'auto' to change)",
        _configured,
        source,
        ENV_VAR,
    )
    return _configured


UPDATE_ENV_VAR = "SWETRAIN_UPDATE_THREADS"


def update_threads() -> int:
    """Intra-op threads for a trainer's update phase: ``SWETRAIN_UPDATE_THREADS`` (an integer, or
    ``auto``/unset = every core this process may use). The rollout phase shares the cores with
    sandboxes and workers; the update phase runs alone, so it can take them all."""
    value = _env_threads(UPDATE_ENV_VAR)
    if isinstance(value, int):
        return value
    return usable_cores()


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask on Linux, else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


class torch_threads:
    """Context manager: run the block with ``n`` intra-op threads, then restore the previous number."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.previous: int | None = None

    def __enter__(self) -> torch_threads:
        import torch

        self.previous = torch.get_num_threads()
        if self.n != self.previous:
            torch.set_num_threads(self.n)
        return self

    def __exit__(self, *exc: object) -> None:
        import torch

        if self.previous is not None and torch.get_num_threads() != self.previous:
            torch.set_num_threads(self.previous)
