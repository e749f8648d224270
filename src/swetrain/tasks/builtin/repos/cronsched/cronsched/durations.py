"""Duration strings (``1h30m``) and retry backoff schedules."""
from __future__ import annotations

UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> int:
    """``"1h30m"`` -> 5400 seconds. Units w, d, h, m, s in any order; a bare number means seconds;
    each unit may appear once."""
    s = text.strip().lower()
    if not s:
        raise ValueError("empty duration")
    if s.isdigit():
        return int(s)
    total = 0
    number = ""
    seen: set[str] = set()
    for ch in s:
        if ch.isdigit():
            number += ch
        elif ch in UNITS:
            if not number:
                raise ValueError(f"unit {ch!r} without a number in {text!r}")
            if ch in seen:
                raise ValueError(f"unit {ch!r} repeated in {text!r}")
            seen.add(ch)
            total += int(number) * UNITS[ch]
            number = ""
        else:
            raise ValueError(f"bad character {ch!r} in {text!r}")
    if number:
        raise ValueError(f"trailing number without unit in {text!r}")
    return total


def format_duration(seconds: int) -> str:
    """Inverse of ``parse_duration`` using the largest units first, e.g. 90061 -> ``"1d1h1m1s"``; 0 -> ``"0s"``."""
    if seconds < 0:
        raise ValueError("duration must be non-negative")
    if seconds == 0:
        return "0s"
    parts = []
    for unit, size in UNITS.items():
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


def backoff_delays(retries: int, base: float = 1.0, factor: float = 2.0, cap: float = 60.0) -> list[float]:
    """Delays before each retry: ``base * factor**i`` capped at ``cap``, for ``i`` in ``0..retries-1``."""
    if retries < 0:
        raise ValueError("retries must be non-negative")
    if base <= 0 or factor < 1:
        raise ValueError("base must be positive and factor at least 1")
    delays = []
    for i in range(retries):
        delays.append(min(cap, base * factor ** i))
    return delays
