import pytest

from cronsched import JobQueue, backoff_delays, format_duration, parse_duration


def test_parse_bare_seconds():
    assert parse_duration("90") == 90


def test_parse_compound():
    assert parse_duration("1h30m") == 5400
    assert parse_duration("2d3s") == 2 * 86400 + 3
    assert parse_duration("1W") == 604800


def test_parse_any_order():
    assert parse_duration("30m1h") == 5400


def test_parse_errors():
    for bad in ["", "h", "1h1h", "1x", "5m3", "1 h"]:
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_format_zero():
    assert format_duration(0) == "0s"


def test_format_compound():
    assert format_duration(90061) == "1d1h1m1s"
    assert format_duration(3600) == "1h"
    assert format_duration(604800 + 59) == "1w59s"


def test_format_negative():
    with pytest.raises(ValueError):
        format_duration(-1)


def test_format_parse_roundtrip():
    for s in [1, 59, 60, 61, 3599, 86399, 700000]:
        assert parse_duration(format_duration(s)) == s


def test_backoff_growth_and_cap():
    assert backoff_delays(5, base=1, factor=2, cap=10) == [1, 2, 4, 8, 10]


def test_backoff_zero_retries():
    assert backoff_delays(0) == []


def test_backoff_errors():
    with pytest.raises(ValueError):
        backoff_delays(-1)
    with pytest.raises(ValueError):
        backoff_delays(1, base=0)
    with pytest.raises(ValueError):
        backoff_delays(1, factor=0.5)


def test_queue_priority_order():
    q = JobQueue()
    q.submit("low", priority=5)
    q.submit("high", priority=1)
    assert q.pop_ready(0).name == "high" and q.pop_ready(0).name == "low"


def test_queue_fifo_on_tie():
    q = JobQueue()
    q.submit("a")
    q.submit("b")
    assert [q.pop_ready(0).name, q.pop_ready(0).name] == ["a", "b"]


def test_queue_delayed_not_ready():
    q = JobQueue()
    q.submit("later", at=10)
    assert q.pop_ready(9.9) is None
    assert q.pop_ready(10).name == "later"


def test_queue_ready_low_priority_beats_unready_high():
    q = JobQueue()
    q.submit("urgent-later", priority=0, at=5)
    q.submit("now", priority=9)
    assert q.pop_ready(1).name == "now"


def test_queue_retry_uses_backoff():
    q = JobQueue(max_retries=3, base_delay=2)
    q.submit("j")
    job = q.pop_ready(0)
    assert q.fail(job, now=100) is True
    assert q.next_ready_time() == 102
    retry = q.pop_ready(102)
    assert retry.attempts == 1
    q.fail(retry, now=200)
    assert q.next_ready_time() == 204


def test_queue_dead_after_max_retries():
    q = JobQueue(max_retries=1)
    q.submit("j")
    job = q.pop_ready(0)
    assert q.fail(job, 0) is True
    job = q.pop_ready(10)
    assert q.fail(job, 10) is False and q.dead == ["j"] and len(q) == 0


def test_queue_empty_next_time():
    assert JobQueue().next_ready_time() is None
