import pytest

from statlite import bin_edges, histogram, quantile_bins


def test_bin_edges_spacing():
    assert bin_edges(0, 10, 5) == [0, 2, 4, 6, 8, 10]


def test_bin_edges_last_is_exact_hi():
    edges = bin_edges(0, 1, 3)
    assert len(edges) == 4 and edges[-1] == 1


def test_bin_edges_bad_args():
    with pytest.raises(ValueError):
        bin_edges(0, 1, 0)
    with pytest.raises(ValueError, match="empty range"):
        bin_edges(1, 1, 2)


def test_histogram_counts():
    counts, edges = histogram([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], bins=5, range_=(0, 10))
    assert counts == [2, 2, 2, 2, 2]


def test_histogram_right_edge_in_last_bin():
    counts, _ = histogram([0, 10], bins=2, range_=(0, 10))
    assert counts == [1, 1], "the maximum value belongs in the last bin"


def test_histogram_left_edge_of_bin_is_inclusive():
    counts, _ = histogram([5], bins=2, range_=(0, 10))
    assert counts == [0, 1]


def test_histogram_ignores_out_of_range():
    counts, _ = histogram([-1, 0.5, 11], bins=1, range_=(0, 10))
    assert counts == [1]


def test_histogram_infers_range():
    counts, edges = histogram([1, 2, 3], bins=2)
    assert edges == [1, 2, 3] and counts == [1, 2]


def test_histogram_constant_sample():
    counts, edges = histogram([4, 4], bins=1)
    assert edges == [3.5, 4.5] and counts == [2]


def test_histogram_no_values_no_range():
    with pytest.raises(ValueError):
        histogram([], bins=3)


def test_histogram_total_preserved():
    data = [0.1 * i for i in range(57)]
    counts, _ = histogram(data, bins=7)
    assert sum(counts) == 57


def test_quantile_bins_quartiles():
    assert quantile_bins([1, 2, 3, 4, 5, 6, 7, 8], 4) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_quantile_bins_single_bin():
    assert quantile_bins([5, 1, 3], 1) == [0, 0, 0]


def test_quantile_bins_value_on_cut_goes_low():
    assert quantile_bins([1, 2, 3], 2) == [0, 0, 1]


def test_quantile_bins_bad_q():
    with pytest.raises(ValueError):
        quantile_bins([1], 0)
