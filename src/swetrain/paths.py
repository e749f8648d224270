"""Where swetrain keeps things it builds once and reuses (snapshots, environments, policies).

``SWETRAIN_HOME`` overrides the default ``~/.cache/swetrain``.
"""

from __future__ import annotations

import os
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
