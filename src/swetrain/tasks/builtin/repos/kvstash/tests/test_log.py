import pytest

from kvstash import ManualClock, Store, decode_entry, encode_entry, replay


def test_encode_set():
    assert encode_entry("set", "k", "v") == "SET k - v"


def test_encode_set_with_ttl():
    assert encode_entry("SET", "k", "v", ttl=5) == "SET k 5.0 v"


def test_encode_escapes_spaces_and_backslashes():
    assert encode_entry("SET", "a b", "c\\d") == "SET a\\sb - c\\\\d"


def test_encode_del():
    assert encode_entry("del", "k") == "DEL k"


def test_encode_set_needs_value():
    with pytest.raises(ValueError):
        encode_entry("SET", "k")


def test_encode_unknown_op():
    with pytest.raises(ValueError, match="unknown op"):
        encode_entry("PUT", "k", "v")


def test_roundtrip_tricky_text():
    line = encode_entry("SET", "key with space", "multi\nline \\ value", ttl=2.5)
    assert decode_entry(line) == ("SET", "key with space", "multi\nline \\ value", 2.5)


def test_decode_del():
    assert decode_entry("DEL x\n") == ("DEL", "x", None, None)


def test_decode_rejects_garbage():
    for bad in ["", "GET x", "SET x 1", "DEL a b"]:
        with pytest.raises(ValueError):
            decode_entry(bad)


def test_replay_applies_in_order():
    lines = [encode_entry("SET", "a", "1"), encode_entry("SET", "b", "2"), encode_entry("DEL", "a")]
    s = replay(lines)
    assert s.keys() == ["b"] and s.get("b") == "2"


def test_replay_skips_comments_and_blank():
    s = replay(["# header", "", "  ", "SET a - 1"])
    assert s.keys() == ["a"]


def test_replay_into_existing_store_with_ttl():
    clock = ManualClock()
    s = Store(clock=clock)
    replay(["SET a 3.0 x"], s)
    clock.advance(3)
    assert s.get("a") is None


def test_clock_cannot_go_back():
    with pytest.raises(ValueError):
        ManualClock().advance(-1)
