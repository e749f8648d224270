import pytest

from kvstash import ManualClock, Store, TransactionError


def test_rollback_restores_old_value():
    s = Store()
    s.set("a", 1)
    s.begin()
    s.set("a", 2)
    s.rollback()
    assert s.get("a") == 1


def test_rollback_removes_new_key():
    s = Store()
    s.begin()
    s.set("new", 1)
    s.rollback()
    assert "new" not in s


def test_rollback_restores_deleted_key():
    s = Store()
    s.set("a", 1)
    s.begin()
    s.delete("a")
    s.rollback()
    assert s.get("a") == 1


def test_rollback_restores_ttl():
    clock = ManualClock()
    s = Store(clock=clock)
    s.set("a", 1, ttl=10)
    s.begin()
    s.set("a", 2)
    s.rollback()
    assert s.ttl("a") == pytest.approx(10.0)


def test_multiple_writes_rolled_back_to_first_value():
    s = Store()
    s.set("a", "orig")
    s.begin()
    s.set("a", "x")
    s.set("a", "y")
    s.rollback()
    assert s.get("a") == "orig", "undo must replay newest first"


def test_commit_keeps_changes():
    s = Store()
    s.begin()
    s.set("a", 1)
    s.commit()
    assert s.get("a") == 1 and s.depth == 0


def test_nested_inner_rollback_only():
    s = Store()
    s.begin()
    s.set("a", 1)
    s.begin()
    s.set("a", 2)
    s.rollback()
    assert s.get("a") == 1 and s.depth == 1


def test_nested_commit_then_outer_rollback():
    s = Store()
    s.begin()
    s.begin()
    s.set("a", 1)
    s.commit()
    s.rollback()
    assert "a" not in s, "outer rollback must undo the committed inner changes"


def test_depth_counts():
    s = Store()
    s.begin()
    s.begin()
    assert s.depth == 2


def test_commit_without_begin():
    with pytest.raises(TransactionError):
        Store().commit()


def test_rollback_without_begin():
    with pytest.raises(TransactionError):
        Store().rollback()


def test_rollback_restores_evicted_key():
    s = Store(capacity=1)
    s.set("a", 1)
    s.begin()
    s.set("b", 2)
    s.rollback()
    assert s.keys() == ["a"]


def test_changes_outside_transaction_not_recorded():
    s = Store()
    s.set("a", 1)
    s.begin()
    s.rollback()
    assert s.get("a") == 1
