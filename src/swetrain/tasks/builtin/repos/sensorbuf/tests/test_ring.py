import pytest

from sensorbuf import RingBuffer


def test_capacity_validation():
    with pytest.raises(ValueError):
        RingBuffer(0)


def test_push_and_iterate():
    rb = RingBuffer(3)
    for v in (1, 2):
        rb.push(v)
    assert list(rb) == [1, 2] and len(rb) == 2 and not rb.full


def test_overwrite_oldest():
    rb = RingBuffer(3)
    for v in range(1, 6):
        rb.push(v)
    assert list(rb) == [3, 4, 5] and rb.dropped == 2 and rb.full


def test_exactly_full_no_drop():
    rb = RingBuffer(2)
    rb.push(1)
    rb.push(2)
    assert rb.dropped == 0 and rb.full


def test_indexing():
    rb = RingBuffer(3)
    for v in range(10, 15):
        rb.push(v)
    assert rb[0] == 12 and rb[-1] == 14 and rb[1] == 13


def test_index_out_of_range():
    rb = RingBuffer(3)
    rb.push(1)
    with pytest.raises(IndexError):
        rb[1]
    with pytest.raises(IndexError):
        rb[-2]


def test_latest():
    rb = RingBuffer(5)
    for v in range(7):
        rb.push(v)
    assert rb.latest(2) == [5, 6] and rb.latest(10) == [2, 3, 4, 5, 6]


def test_pop_oldest():
    rb = RingBuffer(2)
    for v in (1, 2, 3):
        rb.push(v)
    assert rb.pop_oldest() == 2 and list(rb) == [3]


def test_pop_then_push_wraps():
    rb = RingBuffer(2)
    rb.push(1)
    rb.push(2)
    rb.pop_oldest()
    rb.push(3)
    assert list(rb) == [2, 3] and rb.dropped == 0


def test_pop_empty():
    with pytest.raises(IndexError):
        RingBuffer(1).pop_oldest()


def test_mean_and_spread():
    rb = RingBuffer(4)
    for v in (2, 8, 4, 6, 10):
        rb.push(v)
    assert rb.mean() == 7 and rb.spread() == 6


def test_stats_empty():
    with pytest.raises(ValueError):
        RingBuffer(2).mean()
    with pytest.raises(ValueError):
        RingBuffer(2).spread()
