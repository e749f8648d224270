"""``load_policy(spec)``: one string names any policy backend.

The grammar (model folders, ``tiny``, ``tiny-sft``, ``smollm2[-sft]``, ``hf:``, ``openai:``,
``vllm:``, ``scripted:``, ``scripted-repair``) lives in :mod:`swetrain.policy.spec`, shared by every
command.
"""

from __future__ import annotations

from typing import Any

from swetrain.policy.base import Policy
from swetrain.policy.spec import SCHEMES, PolicySpecError, parse_policy_spec

__all__ = ["SCHEMES", "PolicySpecError", "load_policy"]


def load_policy(spec: str, **kwargs: Any) -> Policy:
    """Build the policy named by ``spec``; ``kwargs`` go to the backend's constructor."""
    return parse_policy_spec(spec).build(**kwargs)
