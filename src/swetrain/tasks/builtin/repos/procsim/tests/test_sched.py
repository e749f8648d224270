import pytest

from procsim import Proc, fcfs, metrics, priority, round_robin, sjf

P = [Proc("p1", 0, 5, priority=3), Proc("p2", 1, 3, priority=1), Proc("p3", 2, 1, priority=2)]


def test_proc_validation():
    with pytest.raises(ValueError):
        Proc("x", 0, 0)
    with pytest.raises(ValueError):
        Proc("x", -1, 1)


def test_duplicate_pids():
    with pytest.raises(ValueError, match="duplicate"):
        fcfs([Proc("a", 0, 1), Proc("a", 1, 1)])


def test_fcfs_order():
    assert fcfs(P) == [("p1", 0, 5), ("p2", 5, 8), ("p3", 8, 9)]


def test_fcfs_idle_gap():
    assert fcfs([Proc("a", 0, 2), Proc("b", 5, 1)]) == [("a", 0, 2), ("b", 5, 6)]


def test_fcfs_tie_by_pid():
    assert [s[0] for s in fcfs([Proc("b", 0, 1), Proc("a", 0, 1)])] == ["a", "b"]


def test_sjf_picks_shortest_ready():
    assert sjf(P) == [("p1", 0, 5), ("p3", 5, 6), ("p2", 6, 9)]


def test_sjf_waits_for_arrival():
    assert sjf([Proc("late", 4, 1)]) == [("late", 4, 5)]


def test_sjf_tie_by_arrival():
    procs = [Proc("a", 0, 4), Proc("b", 1, 2), Proc("c", 2, 2)]
    assert [s[0] for s in sjf(procs)] == ["a", "b", "c"]


def test_priority_lowest_number_first():
    assert priority(P) == [("p1", 0, 5), ("p2", 5, 8), ("p3", 8, 9)]
    procs = [Proc("a", 0, 1, 5), Proc("b", 0, 1, 1), Proc("c", 0, 1, 3)]
    assert [s[0] for s in priority(procs)] == ["b", "c", "a"]


def test_round_robin_classic():
    assert round_robin(P, 2) == [("p1", 0, 2), ("p2", 2, 4), ("p3", 4, 5), ("p1", 5, 7), ("p2", 7, 8), ("p1", 8, 9)]


def test_round_robin_single_process_merged():
    assert round_robin([Proc("a", 0, 5)], 2) == [("a", 0, 5)]


def test_round_robin_big_quantum_is_fcfs():
    assert round_robin(P, 100) == fcfs(P)


def test_round_robin_idle_gap():
    assert round_robin([Proc("a", 0, 1), Proc("b", 3, 2)], 1) == [("a", 0, 1), ("b", 3, 5)]


def test_round_robin_bad_quantum():
    with pytest.raises(ValueError):
        round_robin(P, 0)


def test_metrics_fcfs():
    m = metrics(P, fcfs(P))
    assert m["p2"] == {"completion": 8, "turnaround": 7, "waiting": 4, "response": 4}
    assert m["avg"]["waiting"] == pytest.approx((0 + 4 + 6) / 3)


def test_metrics_round_robin_response():
    m = metrics(P, round_robin(P, 2))
    assert m["p1"]["response"] == 0 and m["p3"]["response"] == 2 and m["p1"]["completion"] == 9
    assert m["p1"]["waiting"] == 4


def test_metrics_missing_process():
    with pytest.raises(ValueError, match="never ran"):
        metrics(P, [("p1", 0, 5)])
