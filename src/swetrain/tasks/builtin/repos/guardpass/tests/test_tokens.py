import pytest

from guardpass import ExpiredToken, InvalidToken, b64url_decode, b64url_encode, sign_token, verify_token

SECRET = b"s3cret"


def test_b64url_no_padding():
    assert b64url_encode(b"ab") == "YWI"


def test_b64url_roundtrip_all_lengths():
    for n in range(8):
        data = bytes(range(250, 250 - n, -1))
        assert b64url_decode(b64url_encode(data)) == data, f"length {n}"


def test_b64url_impossible_length():
    with pytest.raises(InvalidToken):
        b64url_decode("abcde")


def test_sign_and_verify_roundtrip():
    tok = sign_token({"sub": "ann"}, SECRET, now=1000)
    assert verify_token(tok, SECRET, now=5000) == {"sub": "ann", "iat": 1000}


def test_sign_sets_exp():
    tok = sign_token({}, SECRET, now=100.9, ttl=60)
    assert verify_token(tok, SECRET, now=101)["exp"] == 160


def test_sign_is_deterministic():
    assert sign_token({"b": 1, "a": 2}, SECRET, 0) == sign_token({"a": 2, "b": 1}, SECRET, 0)


def test_sign_rejects_empty_secret():
    with pytest.raises(ValueError):
        sign_token({}, b"", 0)


def test_sign_rejects_bad_ttl():
    with pytest.raises(ValueError):
        sign_token({}, SECRET, 0, ttl=0)


def test_wrong_secret():
    tok = sign_token({"sub": "x"}, SECRET, 0)
    with pytest.raises(InvalidToken, match="signature"):
        verify_token(tok, b"other", 0)


def test_tampered_body():
    tok = sign_token({"role": "user"}, SECRET, 0)
    body, sig = tok.split(".")
    forged = b64url_encode(b'{"iat":0,"role":"admin"}')
    with pytest.raises(InvalidToken):
        verify_token(forged + "." + sig, SECRET, 0)


def test_malformed_token():
    for bad in ["abc", "a.b.c", ".sig", "body."]:
        with pytest.raises(InvalidToken):
            verify_token(bad, SECRET, 0)


def test_valid_until_just_before_exp():
    tok = sign_token({}, SECRET, now=0, ttl=10)
    assert verify_token(tok, SECRET, now=9.99)["exp"] == 10


def test_expired_at_exp():
    tok = sign_token({}, SECRET, now=0, ttl=10)
    with pytest.raises(ExpiredToken):
        verify_token(tok, SECRET, now=10)


def test_leeway_extends():
    tok = sign_token({}, SECRET, now=0, ttl=10)
    assert verify_token(tok, SECRET, now=12, leeway=5)["exp"] == 10
    with pytest.raises(ExpiredToken):
        verify_token(tok, SECRET, now=15, leeway=5)
