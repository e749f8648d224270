"""Password policy checking and a simple entropy-based strength estimate."""
from __future__ import annotations

import math
import string
from dataclasses import dataclass, field


@dataclass
class PasswordPolicy:
    """Rules a password must satisfy; ``check`` lists every violated rule."""

    min_length: int = 8
    max_length: int = 128
    require_upper: bool = True
    require_lower: bool = True
    require_digit: bool = True
    require_symbol: bool = False
    max_repeat: int = 3
    banned: set[str] = field(default_factory=lambda: {"password", "qwerty", "letmein"})

    def check(self, password: str, username: str | None = None) -> list[str]:
        """Return the list of violation codes (empty when the password is acceptable).

        Codes: ``too_short``, ``too_long``, ``no_upper``, ``no_lower``, ``no_digit``, ``no_symbol``,
        ``repeated`` (a run of more than ``max_repeat`` identical characters), ``banned`` (contains a
        banned word, case-insensitively), ``contains_username`` (username of 3+ chars appears).
        """
        problems: list[str] = []
        if len(password) < self.min_length:
            problems.append("too_short")
        if len(password) > self.max_length:
            problems.append("too_long")
        if self.require_upper and not any(c.isupper() for c in password):
            problems.append("no_upper")
        if self.require_lower and not any(c.islower() for c in password):
            problems.append("no_lower")
        if self.require_digit and not any(c.isdigit() for c in password):
            problems.append("no_digit")
        if self.require_symbol and not any(c in string.punctuation for c in password):
            problems.append("no_symbol")
        if longest_run(password) > self.max_repeat:
            problems.append("repeated")
        lowered = password.lower()
        if any(word in lowered for word in self.banned):
            problems.append("banned")
        if username and len(username) >= 3 and username.lower() in lowered:
            problems.append("contains_username")
        return problems

    def is_valid(self, password: str, username: str | None = None) -> bool:
        """True when ``check`` finds no violation."""
        return not self.check(password, username)


def longest_run(text: str) -> int:
    """Length of the longest run of one repeated character (0 for an empty string)."""
    best = 0
    run = 0
    prev = None
    for ch in text:
        if ch == prev:
            run += 1
        else:
            run = 1
            prev = ch
        if run > best:
            best = run
    return best


def entropy_bits(password: str) -> float:
    """Estimated entropy: ``len * log2(pool)`` where the pool sums the character classes used.

    Pools: lower 26, upper 26, digits 10, punctuation 32, anything else 100.
    """
    if not password:
        return 0.0
    pool = 0
    if any(c in string.ascii_lowercase for c in password):
        pool += 26
    if any(c in string.ascii_uppercase for c in password):
        pool += 26
    if any(c in string.digits for c in password):
        pool += 10
    if any(c in string.punctuation for c in password):
        pool += 32
    if any(not c.isascii() or c.isspace() for c in password):
        pool += 100
    return len(password) * math.log2(pool)


def strength(password: str) -> str:
    """``weak`` below 40 bits, ``fair`` below 60, ``strong`` below 80, else ``excellent``."""
    bits = entropy_bits(password)
    if bits < 40:
        return "weak"
    if bits < 60:
        return "fair"
    if bits < 80:
        return "strong"
    return "excellent"
