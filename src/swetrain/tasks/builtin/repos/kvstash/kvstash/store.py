"""The store: string keys, arbitrary values, optional TTL, LRU capacity and nested transactions."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterator

_MISSING = object()


class KeyExpired(KeyError):
    """Raised by ``Store.get_strict`` when a key existed but its TTL has passed."""


class TransactionError(RuntimeError):
    """Commit or rollback without an open transaction."""


class Store:
    """A key-value store.

    ``capacity`` bounds the number of live keys; when a new key would exceed it the least recently
    used key is evicted. ``clock`` is a zero-argument callable returning seconds.
    """

    def __init__(self, capacity: int | None = None, clock: Callable[[], float] | None = None) -> None:
        if capacity is not None and capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self.clock = clock or (lambda: 0.0)
        self._data: OrderedDict[str, Any] = OrderedDict()
        self._expiry: dict[str, float] = {}
        self._undo: list[list[tuple[str, Any, float | None]]] = []
        self.evictions = 0

    # -- expiry -------------------------------------------------------------
    def _is_expired(self, key: str) -> bool:
        deadline = self._expiry.get(key)
        return deadline is not None and self.clock() >= deadline

    def _purge(self, key: str) -> bool:
        if key in self._data and self._is_expired(key):
            del self._data[key]
            del self._expiry[key]
            return True
        return False

    def purge_expired(self) -> int:
        """Delete every expired key and return how many were removed."""
        return sum(1 for key in list(self._data) if self._purge(key))

    # -- undo log for transactions ----------------------------------------------
    def _record(self, key: str) -> None:
        if not self._undo:
            return
        old = self._data.get(key, _MISSING)
        self._undo[-1].append((key, old, self._expiry.get(key)))

    # -- basic operations ---------------------------------------------------------
    def set(self, key: str, value: Any, ttl: float | None = None) -> None:
        """Store ``value`` under ``key``; ``ttl`` seconds (> 0) makes it expire, ``None`` keeps it forever."""
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be positive, got {ttl}")
        self._purge(key)
        self._record(key)
        is_new = key not in self._data
        self._data[key] = value
        self._data.move_to_end(key)
        if ttl is None:
            self._expiry.pop(key, None)
        else:
            self._expiry[key] = self.clock() + ttl
        if is_new and self.capacity is not None:
            self.purge_expired()
            while len(self._data) > self.capacity:
                oldest = next(iter(self._data))
                self._record(oldest)
                del self._data[oldest]
                self._expiry.pop(oldest, None)
                self.evictions += 1

    def get(self, key: str, default: Any = None) -> Any:
        """Return the live value for ``key`` (marking it recently used) or ``default``."""
        self._purge(key)
        if key not in self._data:
            return default
        self._data.move_to_end(key)
        return self._data[key]

    def get_strict(self, key: str) -> Any:
        """Like ``get`` but raises ``KeyExpired`` for an expired key and ``KeyError`` for a missing one."""
        if key in self._data and self._is_expired(key):
            self._purge(key)
            raise KeyExpired(key)
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def delete(self, key: str) -> bool:
        """Remove ``key``; return whether a live key was removed."""
        self._purge(key)
        if key not in self._data:
            return False
        self._record(key)
        del self._data[key]
        self._expiry.pop(key, None)
        return True

    def ttl(self, key: str) -> float | None:
        """Seconds left before ``key`` expires, ``None`` if it never expires; ``KeyError`` if missing."""
        self._purge(key)
        if key not in self._data:
            raise KeyError(key)
        deadline = self._expiry.get(key)
        if deadline is None:
            return None
        return max(0.0, deadline - self.clock())

    def incr(self, key: str, amount: int = 1) -> int:
        """Add ``amount`` to an integer value (missing counts as 0), keeping its TTL; return the new value."""
        current = self.get(key, 0)
        if not isinstance(current, int) or isinstance(current, bool):
            raise TypeError(f"value of {key!r} is not an integer")
        remaining = self.ttl(key) if key in self._data else None
        self.set(key, current + amount, ttl=remaining if remaining else None)
        return current + amount

    def __len__(self) -> int:
        self.purge_expired()
        return len(self._data)

    def __contains__(self, key: str) -> bool:
        self._purge(key)
        return key in self._data

    def keys(self, prefix: str = "") -> list[str]:
        """Sorted live keys that start with ``prefix``."""
        self.purge_expired()
        return sorted(k for k in self._data if k.startswith(prefix))

    def scan(self, start: str | None = None, stop: str | None = None, limit: int | None = None) -> Iterator[tuple[str, Any]]:
        """Yield ``(key, value)`` in key order with ``start <= key < stop``, at most ``limit`` pairs."""
        count = 0
        for key in self.keys():
            if start is not None and key < start:
                continue
            if stop is not None and key >= stop:
                break
            if limit is not None and count >= limit:
                break
            count += 1
            yield key, self._data[key]

    # -- transactions ---------------------------------------------------------
    @property
    def depth(self) -> int:
        """Number of open (nested) transactions."""
        return len(self._undo)

    def begin(self) -> None:
        """Open a transaction; transactions nest."""
        self._undo.append([])

    def commit(self) -> None:
        """Close the innermost transaction keeping its changes (they join the outer one's undo log)."""
        if not self._undo:
            raise TransactionError("commit without begin")
        changes = self._undo.pop()
        if self._undo:
            self._undo[-1].extend(changes)

    def rollback(self) -> None:
        """Undo every change of the innermost transaction, newest first."""
        if not self._undo:
            raise TransactionError("rollback without begin")
        changes = self._undo.pop()
        for key, old, deadline in reversed(changes):
            if old is _MISSING:
                self._data.pop(key, None)
                self._expiry.pop(key, None)
            else:
                self._data[key] = old
                if deadline is None:
                    self._expiry.pop(key, None)
                else:
                    self._expiry[key] = deadline
