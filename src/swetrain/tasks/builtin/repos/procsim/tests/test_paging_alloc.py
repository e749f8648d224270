import pytest

from procsim import AllocError, Allocator, fifo_faults, lru_faults, optimal_faults

REFS = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1]
BELADY = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]


def test_fifo_textbook():
    assert fifo_faults(REFS, 3) == 15


def test_lru_textbook():
    assert lru_faults(REFS, 3) == 12


def test_optimal_textbook():
    assert optimal_faults(REFS, 3) == 9


def test_belady_anomaly_fifo():
    assert fifo_faults(BELADY, 3) == 9 and fifo_faults(BELADY, 4) == 10


def test_lru_no_anomaly():
    assert lru_faults(BELADY, 4) <= lru_faults(BELADY, 3)


def test_one_frame():
    assert fifo_faults([1, 1, 2, 1], 1) == 3 and lru_faults([1, 1, 2, 1], 1) == 3


def test_enough_frames_only_cold_misses():
    assert optimal_faults(REFS, 10) == len(set(REFS)) == lru_faults(REFS, 10)


def test_lru_vs_fifo_recency():
    refs = [1, 2, 1, 3, 1, 4]
    assert lru_faults(refs, 2) == 4 and fifo_faults(refs, 2) == 5


def test_frames_validation():
    for fn in (fifo_faults, lru_faults, optimal_faults):
        with pytest.raises(ValueError):
            fn([1], 0)


def test_alloc_validation():
    with pytest.raises(ValueError):
        Allocator(0)
    with pytest.raises(ValueError):
        Allocator(10, strategy="worst")
    with pytest.raises(ValueError):
        Allocator(10).malloc(0)


def test_alloc_sequential():
    a = Allocator(100)
    assert a.malloc(10) == 0 and a.malloc(20) == 10 and a.free_total() == 70


def test_alloc_exact_fit_consumes_block():
    a = Allocator(10)
    a.malloc(10)
    assert a.free_blocks == [] and a.free_total() == 0


def test_alloc_out_of_memory():
    a = Allocator(10)
    a.malloc(6)
    with pytest.raises(AllocError, match="no block"):
        a.malloc(5)


def test_alignment_rounds_up():
    a = Allocator(64, align=8)
    assert a.malloc(1) == 0 and a.malloc(9) == 8 and a.malloc(8) == 24


def test_free_coalesces_neighbours():
    a = Allocator(30)
    x, y, z = a.malloc(10), a.malloc(10), a.malloc(10)
    a.free(x)
    a.free(z)
    assert a.free_blocks == [(0, 10), (20, 10)]
    a.free(y)
    assert a.free_blocks == [(0, 30)]


def test_double_free():
    a = Allocator(10)
    x = a.malloc(5)
    a.free(x)
    with pytest.raises(AllocError):
        a.free(x)


def test_first_fit_vs_best_fit():
    for strategy, expected in (("first", 0), ("best", 30)):
        a = Allocator(100, strategy=strategy)
        blocks = [a.malloc(n) for n in (20, 5, 5, 5, 10)]   # 0,20,25,30,35 ; free tail 45..100
        a.free(blocks[0])   # hole of 20 at 0
        a.free(blocks[3])   # hole of 5 at 30
        assert a.malloc(4) == expected, strategy


def test_best_fit_tie_lowest_address():
    a = Allocator(40, strategy="best")
    blocks = [a.malloc(10) for _ in range(4)]
    a.free(blocks[2])
    a.free(blocks[0])
    assert a.malloc(10) == 0


def test_fragmentation():
    a = Allocator(30)
    x, _, z = a.malloc(10), a.malloc(10), a.malloc(10)
    assert a.fragmentation() == 0.0
    a.free(x)
    a.free(z)
    assert a.fragmentation() == pytest.approx(0.5) and a.largest_free() == 10
