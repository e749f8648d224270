"""swetrain.algos: the papers' equations as pure, device-agnostic tensor functions.

See docs/algorithms.md for the map from each function to its paper equation.
"""

from .advantages import (
    active_set_advantages,
    broadcast_to_tokens,
    get_advantage_estimator,
    grpo_advantages,
    grpo_mean_advantages,
    list_advantage_estimators,
    register_adv_est,
    rloo_advantages,
)
from .chains import active_mask, attempt_rewards, chain_advantages
from .registry import Registry

__all__ = [
    "Registry",
    "active_mask",
    "active_set_advantages",
    "attempt_rewards",
    "broadcast_to_tokens",
    "chain_advantages",
    "get_advantage_estimator",
    "grpo_advantages",
    "grpo_mean_advantages",
    "list_advantage_estimators",
    "register_adv_est",
    "rloo_advantages",
]
