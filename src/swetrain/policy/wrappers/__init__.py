"""Thread-safe wrappers that let concurrent rollout chains share one policy.

All of them are :class:`~swetrain.policy.wrappers.base.PolicyWrapper` s (``thread_safe = True``,
a ``mode``, :meth:`batch_stats`):

* :class:`LockedPolicy` (``locked``): one call at a time (``wrappers/base.py``);
* :class:`BatchingPolicy` (``batched``): calls that arrive together run as one batched
  ``generate`` with per-row seeds (``wrappers/batching.py``);
* ``ContinuousBatchingPolicy`` (``continuous``): an ``HFPolicy``'s concurrent calls share one
  running batch, rows joining and leaving at every decode step (``wrappers/continuous.py``;
  imported on use, it needs the transformers backend).

:func:`wrap_for_workers` picks one for a number of concurrent callers; :func:`batch_stats` reads
what batching did from whatever it returned.
"""

from __future__ import annotations

import logging

from swetrain.policy.base import Policy
from swetrain.policy.wrappers.base import LockedPolicy, PolicyWrapper
from swetrain.policy.wrappers.batching import BatchingPolicy, supports_seeds

__all__ = ["BatchingPolicy", "LockedPolicy", "PolicyWrapper", "batch_stats", "supports_seeds", "wrap_for_workers"]

log = logging.getLogger(__name__)


def wrap_for_workers(policy: Policy, workers: int, *, batch_generation: bool = False,
                     batch_wait_s: float = 0.005) -> Policy:
    """``policy`` made safe for ``workers`` concurrent callers, each with one call in flight.

    One worker, or a policy that says ``thread_safe = True``, gets the policy itself. Otherwise,
    with ``batch_generation``: a continuously batched decode for an ``HFPolicy`` that supports it,
    else batched calls for a policy whose ``generate`` takes per-row seeds (the oldest waiting call
    starts a batch after ``batch_wait_s``); every other case gets one call at a time. A batch is
    full with ``workers`` rows.
    """
    if workers <= 1 or getattr(policy, "thread_safe", False):
        return policy
    if batch_generation:
        from swetrain.policy.wrappers.continuous import ContinuousBatchingPolicy, supports_continuous

        if supports_continuous(policy):
            return ContinuousBatchingPolicy(policy, max_batch=workers)  # type: ignore[arg-type]
        if supports_seeds(policy):
            return BatchingPolicy(policy, max_batch=workers, max_wait_s=batch_wait_s)
        log.warning("batch_generation: %s.generate takes no per-row seeds; chains call it one at a time",
                    type(policy).__name__)
    return LockedPolicy(policy)


def batch_stats(policy: Policy) -> dict[str, float]:
    """What batching did for a policy :func:`wrap_for_workers` returned (empty when none)."""
    return policy.batch_stats() if isinstance(policy, PolicyWrapper) else {}
