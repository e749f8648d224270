"""Rate limiting: a token bucket and a login-failure lockout guard."""
from __future__ import annotations

from typing import Callable


class TokenBucket:
    """``capacity`` tokens refilled at ``rate`` tokens per second; ``allow(cost)`` spends them."""

    def __init__(self, capacity: float, rate: float, clock: Callable[[], float]) -> None:
        if capacity <= 0 or rate < 0:
            raise ValueError("capacity must be positive and rate non-negative")
        self.capacity = capacity
        self.rate = rate
        self.clock = clock
        self.tokens = float(capacity)
        self.updated = clock()

    def _refill(self) -> None:
        now = self.clock()
        elapsed = now - self.updated
        if elapsed > 0:
            self.tokens = min(self.capacity, self.tokens + elapsed * self.rate)
        self.updated = now

    def allow(self, cost: float = 1.0) -> bool:
        """Spend ``cost`` tokens if available; return whether the request is allowed."""
        if cost <= 0:
            raise ValueError("cost must be positive")
        self._refill()
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        return False

    def wait_time(self, cost: float = 1.0) -> float:
        """Seconds until ``cost`` tokens will be available (0 if they are now; inf if never)."""
        self._refill()
        missing = cost - self.tokens
        if missing <= 0:
            return 0.0
        if self.rate == 0 or cost > self.capacity:
            return float("inf")
        return missing / self.rate


class LoginGuard:
    """Lock an account after ``max_failures`` failures within ``window`` seconds, for ``lockout`` seconds."""

    def __init__(self, max_failures: int, window: float, lockout: float, clock: Callable[[], float]) -> None:
        if max_failures < 1:
            raise ValueError("max_failures must be >= 1")
        self.max_failures = max_failures
        self.window = window
        self.lockout = lockout
        self.clock = clock
        self._failures: dict[str, list[float]] = {}
        self._locked_until: dict[str, float] = {}

    def is_locked(self, user: str) -> bool:
        """True while ``user`` is inside a lockout period."""
        until = self._locked_until.get(user)
        return until is not None and self.clock() < until

    def record_failure(self, user: str) -> bool:
        """Record a failed login; return True if this failure locks the account."""
        now = self.clock()
        recent = [t for t in self._failures.get(user, []) if now - t < self.window]
        recent.append(now)
        self._failures[user] = recent
        if len(recent) >= self.max_failures:
            self._locked_until[user] = now + self.lockout
            self._failures[user] = []
            return True
        return False

    def record_success(self, user: str) -> None:
        """A successful login clears the failure history (not an active lockout)."""
        self._failures.pop(user, None)

    def failures(self, user: str) -> int:
        """Failures of ``user`` still inside the window."""
        now = self.clock()
        return sum(1 for t in self._failures.get(user, []) if now - t < self.window)
