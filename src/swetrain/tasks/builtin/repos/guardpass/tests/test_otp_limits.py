import pytest

from guardpass import LoginGuard, TokenBucket, hotp, totp, verify_totp

RFC_SECRET = b"12345678901234567890"
RFC_CODES = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_hotp_rfc4226_vectors():
    assert [hotp(RFC_SECRET, i) for i in range(10)] == RFC_CODES


def test_hotp_eight_digits():
    assert hotp(RFC_SECRET, 0, digits=8) == "84755224"


def test_hotp_bad_args():
    with pytest.raises(ValueError):
        hotp(RFC_SECRET, -1)
    with pytest.raises(ValueError):
        hotp(RFC_SECRET, 0, digits=5)
    with pytest.raises(ValueError):
        hotp(RFC_SECRET, 0, digits=9)


def test_totp_rfc6238_vector():
    assert totp(RFC_SECRET, 59, digits=8) == "94287082"
    assert totp(RFC_SECRET, 1111111109, digits=8) == "07081804"


def test_totp_step_boundary():
    assert totp(RFC_SECRET, 29) == hotp(RFC_SECRET, 0)
    assert totp(RFC_SECRET, 30) == hotp(RFC_SECRET, 1)


def test_totp_bad_step():
    with pytest.raises(ValueError):
        totp(RFC_SECRET, 0, step=0)


def test_verify_totp_current_and_window():
    now = 300
    assert verify_totp(RFC_SECRET, hotp(RFC_SECRET, 10), now) == 0
    assert verify_totp(RFC_SECRET, hotp(RFC_SECRET, 9), now) == -1
    assert verify_totp(RFC_SECRET, hotp(RFC_SECRET, 11), now) == 1


def test_verify_totp_outside_window():
    assert verify_totp(RFC_SECRET, hotp(RFC_SECRET, 12), 300) is None
    assert verify_totp(RFC_SECRET, hotp(RFC_SECRET, 12), 300, window=2) == 2


def test_verify_totp_rejects_malformed():
    assert verify_totp(RFC_SECRET, "12345", 300) is None
    assert verify_totp(RFC_SECRET, "abcdef", 300) is None


def test_bucket_allows_up_to_capacity():
    c = Clock()
    b = TokenBucket(3, 1, c)
    assert [b.allow() for _ in range(4)] == [True, True, True, False]


def test_bucket_refills_over_time():
    c = Clock()
    b = TokenBucket(2, 0.5, c)
    b.allow(2)
    c.t = 2
    assert b.allow() is True and b.allow() is False


def test_bucket_refill_capped_at_capacity():
    c = Clock()
    b = TokenBucket(2, 10, c)
    c.t = 100
    assert b.allow(2) and not b.allow(0.5)


def test_bucket_wait_time():
    c = Clock()
    b = TokenBucket(4, 2, c)
    b.allow(4)
    assert b.wait_time(3) == pytest.approx(1.5)
    assert b.wait_time(5) == float("inf")


def test_bucket_wait_zero_when_available():
    assert TokenBucket(1, 1, Clock()).wait_time() == 0.0


def test_bucket_invalid():
    with pytest.raises(ValueError):
        TokenBucket(0, 1, Clock())
    with pytest.raises(ValueError):
        TokenBucket(1, 1, Clock()).allow(0)


def test_guard_locks_after_max_failures():
    c = Clock()
    g = LoginGuard(3, window=60, lockout=300, clock=c)
    assert [g.record_failure("u") for _ in range(3)] == [False, False, True]
    assert g.is_locked("u")


def test_guard_lock_expires():
    c = Clock()
    g = LoginGuard(1, window=60, lockout=300, clock=c)
    g.record_failure("u")
    c.t = 299
    assert g.is_locked("u")
    c.t = 300
    assert not g.is_locked("u")


def test_guard_old_failures_leave_window():
    c = Clock()
    g = LoginGuard(2, window=10, lockout=100, clock=c)
    g.record_failure("u")
    c.t = 10
    assert g.record_failure("u") is False and g.failures("u") == 1


def test_guard_success_resets():
    c = Clock()
    g = LoginGuard(2, window=10, lockout=100, clock=c)
    g.record_failure("u")
    g.record_success("u")
    assert g.record_failure("u") is False


def test_guard_users_independent():
    c = Clock()
    g = LoginGuard(1, window=10, lockout=100, clock=c)
    g.record_failure("a")
    assert g.is_locked("a") and not g.is_locked("b")
