"""swetrain.rollout: the rollout engine (local threads or Ray actors) and the trajectory store.

Imports are lazy so ``import swetrain.rollout`` stays cheap.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "RolloutEngine": "swetrain.rollout.engine",
    "ChainJobConfig": "swetrain.rollout.engine",
    "RolloutReport": "swetrain.rollout.engine",
    "ChainResult": "swetrain.rollout.engine",
    "run_chain_job": "swetrain.rollout.engine",
    "summarize": "swetrain.rollout.engine",
    "TrajectoryStore": "swetrain.rollout.store",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'swetrain.rollout' has no attribute {name!r}")
