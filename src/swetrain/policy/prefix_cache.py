"""A prefix cache of KV states for multi-turn generation with a local transformers model.

An agent episode calls ``generate`` once per turn, and each turn's prompt is the previous prompt,
the tokens the model just generated and the new observation. Without reuse every turn re-encodes
the whole conversation: on CPU, SmolLM2-135M prefills ~330 tokens/s on one thread, so a 5-turn
episode of ~2,400 tokens spends most of its time re-reading what it already read. Several episodes
also share a prefix (the system prompt and the issue for the G attempts of one task).

:class:`PrefixCache` keeps the KV cache of each finished ``generate`` call keyed by the token ids it
holds. :meth:`PrefixCache.take` finds the entry with the longest common prefix with a new prompt:

* the prompt extends the entry (the same conversation, next turn): the entry is *moved* out (the
  caller extends it in place, nothing is copied);
* the prompt shares only part of it (another attempt of the same task, or the same prompt again):
  the entry is copied and the copy cropped to the shared part, the original stays for its owner.

At least one prompt token is always left to encode, since its logits start the sampling. Entries
carry the policy version they were computed with; a weight update makes them stale and they are
dropped. Memory is bounded by ``max_tokens`` (least recently used entries are evicted first).
The store is thread-safe: episodes running in threads share one policy.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

__all__ = ["PrefixCache", "common_prefix_len"]


def common_prefix_len(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """Length of the longest common prefix of two id tuples."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:  # the common case (a continuation) in one C-level comparison
        return n
    lo, hi = 0, n  # invariant: a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


@dataclass
class _Entry:
    ids: tuple[int, ...]
    cache: Any
    version: int


class PrefixCache:
    """Token-id-keyed store of KV caches of batch size 1 (see module docstring)."""

    def __init__(self, max_tokens: int = 32768, min_reuse: int = 16) -> None:
        if max_tokens < 0:
            raise ValueError(f"max_tokens={max_tokens!r}: must be >= 0 (0 disables the prefix cache)")
        if min_reuse < 1:
            raise ValueError(f"min_reuse={min_reuse!r}: must be >= 1")
        self.max_tokens = int(max_tokens)
        self.min_reuse = int(min_reuse)
        self._entries: OrderedDict[int, _Entry] = OrderedDict()
        self._next_key = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.reused_tokens = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def tokens(self) -> int:
        """Tokens held by all entries together."""
        return sum(len(e.ids) for e in self._entries.values())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def take(self, prompt: list[int], version: int) -> tuple[Any, int]:
        """``(cache, n)``: a KV cache holding ``prompt[:n]`` that the caller may extend, or ``(None, 0)``."""
        if self.max_tokens == 0 or len(prompt) <= self.min_reuse:
            return None, 0
        key_ids = tuple(prompt)
        with self._lock:
            stale = [k for k, e in self._entries.items() if e.version != version]
            for k in stale:
                del self._entries[k]
            best_key, best_len = None, 0
            for key, entry in self._entries.items():
                n = common_prefix_len(entry.ids, key_ids)
                if n > best_len:
                    best_key, best_len = key, n
            usable = min(best_len, len(prompt) - 1)  # leave one token to encode for the first logits
            if best_key is None or usable < self.min_reuse:
                self.misses += 1
                return None, 0
            entry = self._entries[best_key]
            if best_len == len(entry.ids):  # the prompt extends the entry: move it out
                del self._entries[best_key]
                cache = entry.cache
            else:  # a branch: the entry stays for the conversation that made it. Copied under the
                # lock: once released, that conversation may take the entry and extend it
                self._entries.move_to_end(best_key)
                cache = copy.deepcopy(entry.cache)
        drop = len(entry.ids) - usable
        if drop:
            try:
                cache.crop(-drop)
            except (AttributeError, RuntimeError, ValueError):  # a cache type that cannot be cut back
                with self._lock:
                    self.misses += 1
                return None, 0
        with self._lock:
            self.hits += 1
            self.reused_tokens += usable
        return cache, usable

    def put(self, ids: list[int], cache: Any, version: int) -> None:
        """Store ``cache`` (holding exactly ``ids``), evicting least recently used entries to fit."""
        if self.max_tokens == 0 or len(ids) > self.max_tokens or len(ids) <= self.min_reuse:
            return
        with self._lock:
            self._entries[self._next_key] = _Entry(tuple(ids), cache, version)
            self._next_key += 1
            total = sum(len(e.ids) for e in self._entries.values())
            while total > self.max_tokens:
                _, old = self._entries.popitem(last=False)
                total -= len(old.ids)

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "reused_tokens": self.reused_tokens,
                "entries": len(self._entries), "tokens": self.tokens}
