"""HOTP (RFC 4226) and TOTP (RFC 6238) one-time codes."""
from __future__ import annotations

import hashlib
import hmac
import struct


def hotp(secret: bytes, counter: int, digits: int = 6) -> str:
    """HMAC-SHA1 one-time code for ``counter`` with dynamic truncation, zero-padded to ``digits``."""
    if counter < 0:
        raise ValueError(f"counter must be non-negative, got {counter}")
    if digits < 6 or digits > 8:
        raise ValueError(f"digits must be 6..8, got {digits}")
    mac = hmac.new(secret, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    code = ((mac[offset] & 0x7F) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3]
    return str(code % (10 ** digits)).zfill(digits)


def totp(secret: bytes, now: float, step: int = 30, digits: int = 6, t0: int = 0) -> str:
    """Time-based code: ``hotp(secret, (now - t0) // step)``."""
    if step <= 0:
        raise ValueError("step must be positive")
    return hotp(secret, int((now - t0) // step), digits)


def verify_totp(secret: bytes, code: str, now: float, window: int = 1, step: int = 30, digits: int = 6) -> int | None:
    """Accept ``code`` if it matches a step within ``window`` steps of now; return the step offset or ``None``.

    The current step is tried first, then -1, +1, -2, +2, ...
    """
    if len(code) != digits or not code.isdigit():
        return None
    base = int(now // step)
    offsets = [0]
    for k in range(1, window + 1):
        offsets += [-k, k]
    for off in offsets:
        counter = base + off
        if counter < 0:
            continue
        if hmac.compare_digest(hotp(secret, counter, digits), code):
            return off
    return None
