"""``BatchingPolicy``: gathers the generate calls of concurrent rollout chains into batched calls.

The local rollout backend runs chains in threads, and each chain's agent loop asks for one
continuation at a time (``policy.generate([prompt], config)``). A shared policy runs one call at a
time, so chains in flight queue behind each other although the backend would rather take their
prompts together (vLLM ~3x, batched transformers decoding ~5x the tokens/s of one prompt on CPU:
docs/policy.md).

This wrapper turns such calls into batches without a worker thread (the caller that runs a batch
is one of the waiting callers):

* A call waits while another batch runs on the model; calls that arrive meanwhile queue up.
* When the model is free, the oldest queued call starts a batch once ``max_batch`` prompts are
  queued or its own wait reached ``max_wait_s`` (a few ms: a call that finds the model free and no
  one else queued then runs almost at once).
* A batch takes the queued calls whose settings equal the oldest call's (``GenerationConfig``
  without its seed), in arrival order, up to ``max_batch`` prompts, and runs one
  ``policy.generate(prompts, config, seeds=[...])``. Each call keeps its own seeds (``seed + i``
  for its prompt ``i``, the protocol's convention), so a backend whose rows do not depend on the
  batch's other rows (``HFPolicy``: per-row generators, left padding, explicit positions;
  ``VLLMPolicy``: per-request seeds) returns what the unbatched call would have returned.
* A batch of one call is passed through unchanged (``policy.generate(prompts, config)``), so a
  lone chain keeps the backend's single-prompt paths (``HFPolicy``'s prefix cache).
* An exception of the batched call is raised in every caller of that batch.

``score`` and ``sync_weights`` take the same model lock as a running batch.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field, replace
from typing import Any

from swetrain.policy.base import GenerationConfig, Policy
from swetrain.policy.wrappers.base import PolicyWrapper


def supports_seeds(policy: Any) -> bool:
    """Whether ``policy.generate`` takes per-row ``seeds=[...]`` (needed to batch seeded calls)."""
    try:
        return "seeds" in inspect.signature(policy.generate).parameters
    except (TypeError, ValueError):
        return False


@dataclass
class _Call:
    prompts: list[list[int]]
    config: GenerationConfig
    arrived: float
    result: list[Any] | None = None
    error: BaseException | None = None
    done: bool = False
    key: tuple = field(default=())

    def seeds(self) -> list[int | None]:
        seed = self.config.seed
        return [None if seed is None else int(seed) + i for i in range(len(self.prompts))]


class BatchingPolicy(PolicyWrapper):
    """A thread-safe policy that batches concurrent ``generate`` calls (see the module docstring)."""

    mode = "batched"

    def __init__(self, policy: Policy, *, max_batch: int = 8, max_wait_s: float = 0.005) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if max_wait_s < 0:
            raise ValueError(f"max_wait_s must be >= 0, got {max_wait_s}")
        if not supports_seeds(policy):
            raise TypeError(f"{type(policy).__name__}.generate takes no per-row seeds=[...]: its calls cannot be batched")
        super().__init__(policy)
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self._queue: list[_Call] = []
        # what ran: generate calls, batched policy calls, prompts per policy call (for benches/tests)
        self.stats = {"calls": 0, "batches": 0, "prompts": 0, "max_prompts": 0}

    def batch_stats(self) -> dict[str, float]:
        """``stats`` with the prompts per policy call; empty before the first batch."""
        if not self.stats["batches"]:
            return {}
        return {**self.stats, "prompts_per_call": self.stats["prompts"] / self.stats["batches"]}

    # ------------------------------------------------------------------ generate
    def generate(self, prompts: list[list[int]], config: GenerationConfig | None = None) -> list[Any]:
        config = config or GenerationConfig()
        if not prompts:
            return []
        call = _Call([list(p) for p in prompts], config, time.monotonic(), key=config.batch_key())
        with self._cond:
            self._queue.append(call)
            self._cond.notify_all()
            while not call.done:
                batch = self._ready_batch()
                if batch is None:
                    self._cond.wait(self._wait_timeout())
                    continue
                self._busy = True
                self._cond.release()
                try:
                    self._run(batch)
                finally:
                    self._cond.acquire()
                    self._busy = False
                    self._cond.notify_all()
        if call.error is not None:
            raise call.error
        return call.result  # type: ignore[return-value]

    def _ready_batch(self) -> list[_Call] | None:
        """The next batch if one may start now (called with the condition held)."""
        if self._busy or not self._queue:
            return None
        first = self._queue[0]
        same = [c for c in self._queue if c.key == first.key]
        queued = sum(len(c.prompts) for c in same)
        if queued < self.max_batch and time.monotonic() - first.arrived < self.max_wait_s:
            return None
        batch, n = [], 0
        for c in same:
            if batch and n + len(c.prompts) > self.max_batch:
                break
            batch.append(c)
            n += len(c.prompts)
        for c in batch:
            self._queue.remove(c)
        return batch

    def _wait_timeout(self) -> float | None:
        if self._busy or not self._queue:
            return None  # woken by notify_all
        return max(self._queue[0].arrived + self.max_wait_s - time.monotonic(), 0.0) + 1e-4

    def _run(self, batch: list[_Call]) -> None:
        """Run one batch on the model (without the condition held) and hand out the results."""
        try:
            if len(batch) == 1:
                call = batch[0]
                results = [self._policy.generate(call.prompts, call.config)]
            else:
                prompts = [p for c in batch for p in c.prompts]
                seeds = [s for c in batch for s in c.seeds()]
                gens = self._policy.generate(prompts, replace(batch[0].config, seed=None), seeds=seeds)
                if len(gens) != len(prompts):
                    raise RuntimeError(f"{type(self._policy).__name__}.generate returned {len(gens)} results for {len(prompts)} prompts")
                results, start = [], 0
                for c in batch:
                    results.append(list(gens[start : start + len(c.prompts)]))
                    start += len(c.prompts)
            for c, r in zip(batch, results):
                c.result = r
        except BaseException as exc:  # noqa: BLE001 - raised in every caller of this batch
            for c in batch:
                c.error = exc
        finally:
            n = sum(len(c.prompts) for c in batch)
            self.stats["calls"] += len(batch)
            self.stats["batches"] += 1
            self.stats["prompts"] += n
            self.stats["max_prompts"] = max(self.stats["max_prompts"], n)
            for c in batch:
                c.done = True
