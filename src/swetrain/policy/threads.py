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


def requested_threads(default: int = DEFAULT_THREADS) -> int | None:
    """Threads asked for by ``SWETRAIN_TORCH_THREADS`` (None for ``auto``), else ``default``."""
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return default
    if raw.lower() == "auto":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{ENV_VAR}={raw!r}: expected a positive integer or 'auto'") from None
    if value < 1:
        raise ValueError(f"{ENV_VAR}={raw!r}: expected a positive integer or 'auto'")
    return value


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
