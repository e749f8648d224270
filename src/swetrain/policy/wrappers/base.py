"""The interface every thread-safe policy wrapper shares, and the simplest one (``LockedPolicy``).

A wrapper holds one shared policy (``.policy``) and lets several threads call it at once. It
forwards the wrapped policy's tokenizer, weight version and context window, says
``thread_safe = True``, names its ``mode`` and reports what batching it did (:meth:`batch_stats`),
so a caller never needs to know which wrapper it holds.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from swetrain.policy.base import Generation, GenerationConfig, Policy


class PolicyWrapper:
    """Base of the thread-safe wrappers around one shared policy.

    ``score`` and ``sync_weights`` run alone on the model (:meth:`_exclusive`): they wait until no
    call runs (:meth:`_model_free`), and a wrapper admits no new work while they wait.
    """

    thread_safe: ClassVar[bool] = True
    #: how concurrent calls share the model: ``locked`` (one at a time), ``batched`` (calls that
    #: arrive together run as one call), ``continuous`` (rows join and leave one running batch)
    mode: ClassVar[str] = ""

    def __init__(self, policy: Policy) -> None:
        self._policy = policy
        self.tokenizer = policy.tokenizer
        self._cond = threading.Condition()
        self._busy = False  # a call runs on the model
        self._exclusive_waiting = 0  # callers of _exclusive waiting for the model

    @property
    def policy(self) -> Policy:
        """The wrapped policy."""
        return self._policy

    @property
    def version(self) -> int:
        return int(getattr(self._policy, "version", 0))

    @property
    def max_context(self) -> int | None:
        return getattr(self._policy, "max_context", None)

    def batch_stats(self) -> dict[str, float]:
        """What batching did so far, with ``prompts_per_call`` (how full a model call was on
        average); empty when no call was batched."""
        return {}

    def score(self, sequences: list[list[int]], starts: list[int] | None = None, **kwargs: Any) -> list[list[float]]:
        return self._exclusive(self._policy.score, sequences, starts, **kwargs)

    def sync_weights(self, state_dict: dict[str, Any]) -> None:
        self._exclusive(self._policy.sync_weights, state_dict)

    # ------------------------------------------------------------------ for subclasses
    def _model_free(self) -> bool:
        """Whether a call may run alone on the model now (called with the condition held)."""
        return not self._busy

    def _exclusive(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` alone on the model, once it is free."""
        with self._cond:
            self._exclusive_waiting += 1
            try:
                while not self._model_free():
                    self._cond.wait()
                self._busy = True
            finally:
                self._exclusive_waiting -= 1
        try:
            return fn(*args, **kwargs)
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()


class LockedPolicy(PolicyWrapper):
    """Runs ``generate``/``score``/``sync_weights`` of a shared policy one call at a time."""

    mode = "locked"

    def generate(self, prompts: list[list[int]], config: GenerationConfig) -> list[Generation]:
        return self._exclusive(self._policy.generate, prompts, config)
