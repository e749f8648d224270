"""Where swetrain keeps things it builds once and reuses (snapshots, environments, policies).

``SWETRAIN_HOME`` overrides the default ``~/.cache/swetrain``.
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from collections.abc import Callable
from pathlib import Path


def swetrain_home() -> Path:
    home = Path(os.environ.get("SWETRAIN_HOME", Path.home() / ".cache" / "swetrain")).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    return home


def cache_dir(*parts: str) -> Path:
    """A sub-folder of the swetrain home, created on demand."""
    path = swetrain_home().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def build_once(final: Path, lock: threading.Lock, build: Callable[[Path], None], ready: str = ".swetrain-ready") -> Path:
    """Make the cached folder ``final`` once: ``build(tmp)`` fills a temp folder beside it (writing
    the ``ready`` marker last), which is then renamed into place, so concurrent builders (threads or
    processes) never see half of one; a failed build leaves nothing behind."""
    if (final / ready).exists():
        return final
    with lock:
        if (final / ready).exists():
            return final
        tmp = final.with_name(f"{final.name}.tmp-{uuid.uuid4().hex[:8]}")
        try:
            build(tmp)
            try:
                os.rename(tmp, final)
            except OSError:  # another process finished first
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return final

