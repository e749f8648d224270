"""guardpass: password policies, signed tokens, one-time codes and rate limiting."""
from .policy import PasswordPolicy, entropy_bits, strength
from .tokens import ExpiredToken, InvalidToken, b64url_decode, b64url_encode, sign_token, verify_token
from .otp import hotp, totp, verify_totp
from .limits import LoginGuard, TokenBucket

__all__ = [
    "PasswordPolicy", "entropy_bits", "strength",
    "ExpiredToken", "InvalidToken", "b64url_decode", "b64url_encode", "sign_token", "verify_token",
    "hotp", "totp", "verify_totp", "LoginGuard", "TokenBucket",
]
