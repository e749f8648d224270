"""Compact HMAC-SHA256 signed tokens: ``base64url(json payload) . base64url(signature)``."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any


class InvalidToken(ValueError):
    """The token is malformed or its signature does not match."""


class ExpiredToken(InvalidToken):
    """The signature is fine but the token's ``exp`` has passed."""


def b64url_encode(data: bytes) -> str:
    """URL-safe base64 without ``=`` padding."""
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def b64url_decode(text: str) -> bytes:
    """Inverse of ``b64url_encode`` (restores the padding); raises ``InvalidToken`` on bad input."""
    if len(text) % 4 == 1:
        raise InvalidToken("impossible base64 length")
    padded = text + "=" * (-len(text) % 4)
    try:
        return base64.urlsafe_b64decode(padded.encode("ascii"))
    except (ValueError, UnicodeEncodeError) as exc:
        raise InvalidToken(f"bad base64: {exc}") from exc


def _signature(body: str, secret: bytes) -> str:
    return b64url_encode(hmac.new(secret, body.encode("ascii"), hashlib.sha256).digest())


def sign_token(payload: dict[str, Any], secret: bytes, now: float, ttl: float | None = None) -> str:
    """Sign ``payload``; adds ``iat`` = ``int(now)`` and, with ``ttl``, ``exp`` = ``int(now + ttl)``."""
    if not secret:
        raise ValueError("secret must not be empty")
    if ttl is not None and ttl <= 0:
        raise ValueError(f"ttl must be positive, got {ttl}")
    claims = dict(payload)
    claims["iat"] = int(now)
    if ttl is not None:
        claims["exp"] = int(now + ttl)
    body = b64url_encode(json.dumps(claims, sort_keys=True, separators=(",", ":")).encode("utf-8"))
    return body + "." + _signature(body, secret)


def verify_token(token: str, secret: bytes, now: float, leeway: float = 0) -> dict[str, Any]:
    """Check the signature (constant-time) and expiry; return the claims.

    A token is expired when ``now >= exp + leeway``. Raises ``InvalidToken`` / ``ExpiredToken``.
    """
    if token.count(".") != 1:
        raise InvalidToken("token must have exactly two parts")
    body, sig = token.split(".")
    if not body or not sig:
        raise InvalidToken("empty token part")
    if not hmac.compare_digest(_signature(body, secret), sig):
        raise InvalidToken("signature mismatch")
    try:
        claims = json.loads(b64url_decode(body))
    except json.JSONDecodeError as exc:
        raise InvalidToken("payload is not JSON") from exc
    exp = claims.get("exp")
    if exp is not None and now >= exp + leeway:
        raise ExpiredToken(f"token expired at {exp}")
    return claims
