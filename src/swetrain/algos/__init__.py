"""swetrain.algos: the papers' equations as pure, device-agnostic tensor functions.

* :mod:`.chains` — FC-SWE recovery chains: active set and per-attempt rewards.
* :mod:`.advantages` — group-relative advantages (``rloo``, ``grpo``, ``grpo_mean``, ``active_set``)
  behind ``register_adv_est`` / ``get_advantage_estimator``.
* :mod:`.kl` — K1 penalty in the reward path and returns-to-go (Agentic-miniRL eq. 14).
* :mod:`.losses` — ``agg_loss`` and policy losses (``clipped``, ``minirl``, ``mopd``) behind
  ``register_policy_loss`` / ``get_policy_loss``; each registration records a ``PolicyLossSpec``
  (function, parameter model, capability flags) that the trainer reads via ``get_loss_spec``;
  FC-SWE runtime penalty.
* :mod:`.distill` — MOPD/ExOPD advantages and loss.

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
from .chains import REWARD_SCHEMES, active_mask, attempt_rewards, chain_advantages
from .distill import mopd_advantages, mopd_loss, mopd_metrics
from .kl import k1, k1_token_advantages, k3, kl_metrics, returns_to_go, token_rewards_with_k1
from .losses import (
    AGG_MODES,
    INVALID_ADVANTAGE,
    agg_loss,
    agg_norm,
    apply_invalid_override,
    LossParams,
    PolicyLossSpec,
    clipped_policy_loss,
    get_loss_spec,
    get_policy_loss,
    list_policy_losses,
    minirl_policy_loss,
    register_policy_loss,
    segment_counts,
    segment_flags_to_token_mask,
)
from .registry import Registry

__all__ = [
    "AGG_MODES",
    "INVALID_ADVANTAGE",
    "LossParams",
    "PolicyLossSpec",
    "REWARD_SCHEMES",
    "Registry",
    "active_mask",
    "active_set_advantages",
    "agg_loss",
    "agg_norm",
    "apply_invalid_override",
    "attempt_rewards",
    "broadcast_to_tokens",
    "chain_advantages",
    "clipped_policy_loss",
    "get_advantage_estimator",
    "get_loss_spec",
    "get_policy_loss",
    "grpo_advantages",
    "grpo_mean_advantages",
    "k1",
    "k1_token_advantages",
    "k3",
    "kl_metrics",
    "list_advantage_estimators",
    "list_policy_losses",
    "minirl_policy_loss",
    "mopd_advantages",
    "mopd_loss",
    "mopd_metrics",
    "register_adv_est",
    "register_policy_loss",
    "returns_to_go",
    "rloo_advantages",
    "segment_counts",
    "segment_flags_to_token_mask",
    "token_rewards_with_k1",
]
