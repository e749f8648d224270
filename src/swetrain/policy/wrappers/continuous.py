"""``ContinuousBatchingPolicy``: rows join and leave one running batch at every decode step.

Agent chains alternate between generating a turn and running tools, so their ``generate`` calls
arrive at different times. :class:`~swetrain.policy.wrappers.batching.BatchingPolicy` runs the calls that arrive together
as one ``generate``: that batch runs until its longest row ends, and a call that arrives meanwhile
waits for all of it. On CPU a decode step of a small model costs about the same for 1 row and for
8 (per-operator overhead, not arithmetic: docs/policy.md), so what pays is keeping every chain
that wants tokens in the batch at every step -- iteration-level ("continuous") batching, as vLLM
does on its own.

This wrapper does that for a local :class:`~swetrain.policy.hf.HFPolicy` without a worker thread:

* A call queues one request per prompt. One waiting caller at a time *drives*: it admits queued
  requests into the running batch (at most ``max_batch`` rows), runs one decode step for all rows
  and hands out the rows that ended. It drives until its own requests are done, then another
  waiting caller takes over the same running batch.
* Joining: the newcomers' prompts are encoded in one call that reuses each prompt's cached
  conversation (``HFPolicy``'s prefix cache, per row), their first tokens are sampled from those
  logits, and their KV states are merged into the running batch (left padding, an attention mask,
  explicit positions). The running batch's layers append in place
  (:class:`~swetrain.policy.kv_growth.GrowingLayer`): a decode step does not copy the cache.
* Leaving: a row that sampled a stop id or reached its token limit is removed from the batch, and
  its KV states (the prompt and every sampled token but the last) go to the prefix cache for the
  conversation's next turn. Leading columns that no row uses any more are cut off.
* Rows only join a batch whose sampling settings (``GenerationConfig`` without the seed) equal
  theirs; others wait until the batch drains.
* Row ``i`` of a call samples with its own generator seeded ``config.seed + i``, as
  ``HFPolicy.generate`` does, and its attention sees only its own tokens, so its ids equal those
  of the unbatched call (log-probs within kernel numerics; ``tests/policy/test_policy_continuous.py``).
* ``score`` and ``sync_weights`` wait until the running batch is empty (no new rows are admitted
  meanwhile) and run alone.
* An exception during a step is raised in the caller of every row that was in the batch; the
  batch is cleared and later calls start afresh.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from swetrain.policy.base import Generation, GenerationConfig
from swetrain.policy.hf import HFPolicy, kv_cache_of, sample_next
from swetrain.policy.kv_growth import fill_cache, grow_in_place, growing_layer_class
from swetrain.policy.memory import MemoryReleaser
from swetrain.policy.wrappers.base import PolicyWrapper


def supports_continuous(policy: Any) -> bool:
    """Whether ``policy`` can run under :class:`ContinuousBatchingPolicy` (an ``HFPolicy`` whose
    KV cache is a plain per-layer key/value cache)."""
    return isinstance(policy, HFPolicy) and policy.prefix_cache.max_tokens > 0 and policy.rows_cacheable()


@dataclass
class _Request:
    prompt: list[int]
    config: GenerationConfig
    seed: int | None
    key: tuple
    result: Generation | None = None
    error: BaseException | None = None
    done: bool = False


@dataclass
class _Row:
    request: _Request
    generator: Any
    limit: int
    stops: set[int]
    length: int  # tokens of this row held in the KV cache
    ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    reason: str | None = None

    def add(self, token: int, logprob: float) -> None:
        self.ids.append(token)
        self.logprobs.append(logprob)
        if token in self.stops:
            self.reason = "stop"
        elif len(self.ids) >= self.limit:
            self.reason = "length"


class ContinuousBatchingPolicy(PolicyWrapper):
    """A thread-safe ``HFPolicy`` whose concurrent calls share one running batch (module docstring)."""

    mode = "continuous"

    def __init__(self, policy: HFPolicy, *, max_batch: int = 8) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if not supports_continuous(policy):
            raise TypeError(f"{type(policy).__name__}: continuous batching needs an HFPolicy with a per-layer "
                            "key/value cache and the prefix cache on")
        super().__init__(policy)
        self.max_batch = max_batch
        self._queue: list[_Request] = []
        self._rows: list[_Row] = []
        self._cache: Any = None  # the running batch's KV cache, rows left-padded to one width
        self._mask: Any = None  # [rows, width] attention mask of that cache
        # calls, decode steps, row-tokens sampled, most rows in one step (for reports and benches)
        self.stats = {"calls": 0, "steps": 0, "row_tokens": 0, "max_rows": 0, "joins": 0}
        # a long run frees KV caches of every size; glibc keeps them unless trimmed (policy/memory.py)
        self._releaser = MemoryReleaser()

    def batch_stats(self) -> dict[str, float]:
        """``stats`` with the rows per decode step (how full the running batch was); empty before
        the first step."""
        if not self.stats["steps"]:
            return {}
        return {**self.stats, "prompts_per_call": self.stats["row_tokens"] / self.stats["steps"]}

    # ------------------------------------------------------------------ generate
    def generate(self, prompts: list[list[int]], config: GenerationConfig | None = None) -> list[Generation]:
        config = config or GenerationConfig()
        self._policy.check_request(prompts, config)
        if not prompts:
            return []
        key = config.batch_key()
        requests = [_Request(list(p), config, None if config.seed is None else int(config.seed) + i, key)
                    for i, p in enumerate(prompts)]
        with self._cond:
            self.stats["calls"] += 1
            self._queue.extend(requests)
            self._cond.notify_all()
            while not all(r.done for r in requests):
                if self._busy:
                    self._cond.wait()
                    continue
                self._busy = True
                try:
                    while not all(r.done for r in requests):
                        admitted = self._admissions()
                        if not admitted and not self._rows:
                            break  # nothing to run now (an exclusive call is waiting): wait
                        self._cond.release()
                        try:
                            self._step(admitted)
                        finally:
                            self._cond.acquire()
                        self._cond.notify_all()
                finally:
                    self._busy = False
                    self._cond.notify_all()
                if not all(r.done for r in requests):
                    self._cond.wait()
        for r in requests:
            if r.error is not None:
                raise r.error
        return [r.result for r in requests]  # type: ignore[misc]

    def _admissions(self) -> list[_Request]:
        """Queued requests that may join now (called with the condition held)."""
        if self._exclusive_waiting or not self._queue:
            return []
        key = self._rows[0].request.key if self._rows else self._queue[0].key
        room = self.max_batch - len(self._rows)
        chosen = [r for r in self._queue if r.key == key][:room]
        for r in chosen:
            self._queue.remove(r)
        return chosen

    # ------------------------------------------------------------------ one iteration
    def _step(self, admitted: list[_Request]) -> None:
        """Admit ``admitted``, then one decode step for every row; rows that end are handed out."""
        policy = self._policy
        try:
            with policy.torch_module.inference_mode():
                if admitted:
                    self._join(admitted)
                if self._rows:
                    self._decode()
        except BaseException as exc:  # noqa: BLE001 - raised in the caller of every affected row
            failed = [row.request for row in self._rows] + [r for r in admitted if not r.done]
            self._rows, self._cache, self._mask = [], None, None
            with self._cond:
                for r in failed:
                    r.error, r.done = exc, True

    def _join(self, requests: list[_Request]) -> None:
        policy = self._policy
        torch = policy.torch_module
        prompts = [r.prompt for r in requests]
        ids, mask, positions, merged = policy.batched_prompt(prompts)
        out = policy.forward_prompt(ids, mask, positions, **({policy.cache_arg: merged} if merged is not None else {}))
        cache = kv_cache_of(out)
        rows = [_Row(r, policy.generator(r.seed), policy.token_limit(r.prompt, r.config), policy.stop_ids(r.config),
                     len(r.prompt)) for r in requests]
        config = requests[0].config
        tokens, lps = sample_next(out.logits[:, -1, :].float(), config.temperature, config.top_p,
                                  [row.generator for row in rows], config.top_k)
        for row, token, lp in zip(rows, tokens.tolist(), lps.tolist()):
            row.add(token, lp)
        self.stats["joins"] += len(rows)
        keep = [i for i, row in enumerate(rows) if row.reason is None]
        for i, row in enumerate(rows):
            if row.reason is not None:  # ended on its first token
                self._finish(row, cache, i, mask[i])
        if not keep:
            return
        if len(keep) < len(rows):
            cache.batch_select_indices(torch.tensor(keep, device=policy.device))
            mask = mask[keep]
        rows = [rows[i] for i in keep]
        if not self._rows:
            self._cache, self._mask, self._rows = grow_in_place(cache), mask, rows
            return
        width = max(self._mask.shape[1], mask.shape[1])
        growing = growing_layer_class()
        layers = [growing.stacked([(old.keys, old.values), (new.keys, new.values)], width)
                  for old, new in zip(self._cache.layers, cache.layers)]
        self._cache = fill_cache(policy.empty_cache(), layers)
        self._mask = torch.cat([_left_pad(self._mask, width), _left_pad(mask, width)], dim=0)
        self._rows = self._rows + rows

    def _decode(self) -> None:
        policy = self._policy
        torch = policy.torch_module
        rows = self._rows
        feed = torch.tensor([[row.ids[-1]] for row in rows], device=policy.device)
        positions = torch.tensor([[row.length] for row in rows], device=policy.device)
        self._mask = torch.cat([self._mask, self._mask.new_ones((len(rows), 1))], dim=1)
        out = policy.model(input_ids=feed, attention_mask=self._mask, position_ids=positions, use_cache=True,
                           **{policy.cache_arg: self._cache})
        self._cache = kv_cache_of(out)
        config = rows[0].request.config
        tokens, lps = sample_next(out.logits[:, -1, :].float(), config.temperature, config.top_p,
                                  [row.generator for row in rows], config.top_k)
        for row, token, lp in zip(rows, tokens.tolist(), lps.tolist()):
            row.length += 1
            row.add(token, lp)
        self.stats["steps"] += 1
        self.stats["row_tokens"] += len(rows)
        self.stats["max_rows"] = max(self.stats["max_rows"], len(rows))
        keep = [i for i, row in enumerate(rows) if row.reason is None]
        if len(keep) == len(rows):
            return
        for i, row in enumerate(rows):
            if row.reason is not None:
                self._finish(row, self._cache, i, self._mask[i])
        if not keep:
            self._rows, self._cache, self._mask = [], None, None
            return
        index = torch.tensor(keep, device=policy.device)
        self._mask = self._mask[keep]
        self._rows = [rows[i] for i in keep]
        first = int(self._mask.any(dim=0).nonzero()[0])  # columns before it are padding in every row
        self._mask = self._mask[:, first:]
        for layer in self._cache.layers:  # growing layers (every join makes them): one copy into a buffer with room
            layer.keep(index, first)

    def _finish(self, row: _Row, cache: Any, index: int, row_mask: Any) -> None:
        """Hand out an ended row and keep its KV states (prompt + sampled ids but the last) for its next turn."""
        policy = self._policy
        try:
            policy.store_row(row.request.prompt + row.ids[:-1], cache, index, row_mask)
        except Exception:  # noqa: BLE001 - a lost cache entry only costs a re-encode
            pass
        result = policy.to_generation(row.ids, row.logprobs, row.reason or "length")
        with self._cond:
            row.request.result, row.request.done = result, True
        self._releaser.maybe_release()  # freed KV caches back to the OS (policy/memory.py)

    # ------------------------------------------------------------------ score / sync_weights
    def _model_free(self) -> bool:
        """Alone on the model once no caller drives the batch and it is empty."""
        return not (self._busy or self._rows)


def _left_pad(tensor: Any, width: int) -> Any:
    """``tensor`` ([..., w, d] KV states or a [rows, w] mask) with zero columns prepended to ``width``."""
    import torch

    dim = 1 if tensor.dim() == 2 else -2
    missing = width - tensor.shape[dim]
    if missing <= 0:
        return tensor
    shape = list(tensor.shape)
    shape[dim] = missing
    return torch.cat([tensor.new_zeros(shape), tensor], dim=dim)
