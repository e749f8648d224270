import pytest

from kvstash import KeyExpired, ManualClock, Store


def make(capacity=None):
    clock = ManualClock(100.0)
    return Store(capacity=capacity, clock=clock), clock


def test_set_and_get():
    s, _ = make()
    s.set("a", 1)
    assert s.get("a") == 1


def test_get_default_for_missing():
    s, _ = make()
    assert s.get("nope", "dflt") == "dflt"


def test_overwrite_value():
    s, _ = make()
    s.set("a", 1)
    s.set("a", 2)
    assert s.get("a") == 2 and len(s) == 1


def test_ttl_must_be_positive():
    s, _ = make()
    with pytest.raises(ValueError, match="ttl"):
        s.set("a", 1, ttl=0)


def test_key_alive_before_deadline():
    s, c = make()
    s.set("a", 1, ttl=10)
    c.advance(9.5)
    assert s.get("a") == 1, "key must live until its deadline"


def test_key_expires_exactly_at_deadline():
    s, c = make()
    s.set("a", 1, ttl=10)
    c.advance(10)
    assert s.get("a") is None, "key must be gone at its deadline"


def test_overwrite_without_ttl_clears_expiry():
    s, c = make()
    s.set("a", 1, ttl=5)
    s.set("a", 2)
    c.advance(100)
    assert s.get("a") == 2


def test_ttl_remaining():
    s, c = make()
    s.set("a", 1, ttl=10)
    c.advance(4)
    assert s.ttl("a") == pytest.approx(6.0)


def test_ttl_none_for_persistent_key():
    s, _ = make()
    s.set("a", 1)
    assert s.ttl("a") is None


def test_ttl_missing_key_raises():
    s, _ = make()
    with pytest.raises(KeyError):
        s.ttl("a")


def test_get_strict_expired_vs_missing():
    s, c = make()
    s.set("a", 1, ttl=1)
    c.advance(2)
    with pytest.raises(KeyExpired):
        s.get_strict("a")
    with pytest.raises(KeyError):
        s.get_strict("a")


def test_get_strict_live():
    s, _ = make()
    s.set("a", 0)
    assert s.get_strict("a") == 0


def test_delete_returns_flag():
    s, _ = make()
    s.set("a", 1)
    assert s.delete("a") is True
    assert s.delete("a") is False
    assert "a" not in s


def test_delete_expired_is_false():
    s, c = make()
    s.set("a", 1, ttl=1)
    c.advance(1)
    assert s.delete("a") is False


def test_len_ignores_expired():
    s, c = make()
    s.set("a", 1, ttl=1)
    s.set("b", 2)
    c.advance(5)
    assert len(s) == 1


def test_purge_expired_count():
    s, c = make()
    s.set("a", 1, ttl=1)
    s.set("b", 2, ttl=3)
    s.set("c", 3)
    c.advance(2)
    assert s.purge_expired() == 1


def test_incr_missing_starts_at_zero():
    s, _ = make()
    assert s.incr("n") == 1
    assert s.incr("n", 5) == 6


def test_incr_keeps_ttl():
    s, c = make()
    s.set("n", 1, ttl=10)
    c.advance(3)
    s.incr("n")
    assert s.ttl("n") == pytest.approx(7.0), "incr must keep the remaining TTL"


def test_incr_rejects_non_int():
    s, _ = make()
    s.set("x", "text")
    with pytest.raises(TypeError):
        s.incr("x")


def test_keys_sorted_with_prefix():
    s, _ = make()
    for k in ["user:2", "user:1", "post:1"]:
        s.set(k, 0)
    assert s.keys("user:") == ["user:1", "user:2"]


def test_scan_range_half_open():
    s, _ = make()
    for k in "abcde":
        s.set(k, k.upper())
    assert list(s.scan("b", "d")) == [("b", "B"), ("c", "C")]


def test_scan_limit():
    s, _ = make()
    for k in "abcde":
        s.set(k, 0)
    assert [k for k, _ in s.scan(limit=2)] == ["a", "b"]


def test_scan_limit_zero():
    s, _ = make()
    s.set("a", 0)
    assert list(s.scan(limit=0)) == []


def test_capacity_must_be_positive():
    with pytest.raises(ValueError):
        Store(capacity=0)


def test_lru_eviction_evicts_oldest():
    s, _ = make(capacity=2)
    s.set("a", 1)
    s.set("b", 2)
    s.set("c", 3)
    assert s.keys() == ["b", "c"] and s.evictions == 1


def test_lru_get_refreshes_recency():
    s, _ = make(capacity=2)
    s.set("a", 1)
    s.set("b", 2)
    s.get("a")
    s.set("c", 3)
    assert s.keys() == ["a", "c"], "reading 'a' should have made 'b' the eviction victim"


def test_update_existing_does_not_evict():
    s, _ = make(capacity=2)
    s.set("a", 1)
    s.set("b", 2)
    s.set("a", 3)
    assert s.keys() == ["a", "b"] and s.evictions == 0


def test_expired_keys_freed_before_evicting():
    s, c = make(capacity=2)
    s.set("a", 1, ttl=1)
    s.set("b", 2)
    c.advance(1)
    s.set("c", 3)
    assert s.keys() == ["b", "c"] and s.evictions == 0
