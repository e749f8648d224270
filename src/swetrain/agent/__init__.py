"""swetrain.agent: the chat format, tool-call parser, token-exact agent loop and FC-SWE chains.

Imports are lazy so ``import swetrain.agent`` stays cheap (no torch/transformers).
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "ChatFormat": "swetrain.agent.format",
    "parse_message": "swetrain.agent.parse",
    "ParsedMessage": "swetrain.agent.parse",
    "Trajectory": "swetrain.agent.trajectory",
    "EpisodeLimits": "swetrain.agent.loop",
    "InfraError": "swetrain.agent.loop",
    "run_episode": "swetrain.agent.loop",
    "effective_context_limit": "swetrain.agent.loop",
    "TERMINATION_REASONS": "swetrain.agent.trajectory",
    "RecoveryChain": "swetrain.agent.chains",
    "build_failure_context": "swetrain.agent.chains",
    "CONTEXT_VARIANTS": "swetrain.agent.chains",
    "ScriptedPolicy": "swetrain.agent.scripted",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'swetrain.agent' has no attribute {name!r}")
