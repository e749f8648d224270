import pytest

from statlite import describe, mean, median, mode, percentile, stdev, variance, weighted_mean


def test_mean_simple():
    assert mean([1, 2, 3, 4]) == 2.5


def test_mean_empty_raises():
    with pytest.raises(ValueError, match="at least 1"):
        mean([])


def test_weighted_mean():
    assert weighted_mean([1, 3], [3, 1]) == 1.5


def test_weighted_mean_zero_weight_allowed():
    assert weighted_mean([1, 100], [1, 0]) == 1.0


def test_weighted_mean_length_mismatch():
    with pytest.raises(ValueError, match="length"):
        weighted_mean([1, 2], [1])


def test_weighted_mean_negative_weight():
    with pytest.raises(ValueError, match="non-negative"):
        weighted_mean([1, 2], [1, -1])


def test_weighted_mean_zero_total():
    with pytest.raises(ValueError, match="zero"):
        weighted_mean([1, 2], [0, 0])


def test_median_odd():
    assert median([3, 1, 2]) == 2


def test_median_even():
    assert median([4, 1, 3, 2]) == 2.5


def test_median_single():
    assert median([7]) == 7.0


def test_mode_single_winner():
    assert mode([1, 2, 2, 3]) == [2]


def test_mode_ties_sorted():
    assert mode([3, 1, 3, 1, 2]) == [1, 3]


def test_sample_variance():
    assert variance([2, 4, 4, 4, 5, 5, 7, 9]) == pytest.approx(32 / 7)


def test_population_variance():
    assert variance([2, 4, 4, 4, 5, 5, 7, 9], sample=False) == pytest.approx(4.0)


def test_sample_variance_needs_two():
    with pytest.raises(ValueError):
        variance([1])


def test_population_variance_single_is_zero():
    assert variance([5], sample=False) == 0


def test_stdev_population():
    assert stdev([2, 4, 4, 4, 5, 5, 7, 9], sample=False) == pytest.approx(2.0)


def test_percentile_endpoints():
    data = [5, 1, 4, 2, 3]
    assert percentile(data, 0) == 1 and percentile(data, 100) == 5


def test_percentile_interpolates():
    assert percentile([10, 20, 30, 40], 50) == pytest.approx(25.0)
    assert percentile([10, 20, 30, 40], 25) == pytest.approx(17.5)


def test_percentile_exact_rank():
    assert percentile([1, 2, 3, 4, 5], 75) == 4


def test_percentile_single_value():
    assert percentile([3], 40) == 3.0


def test_percentile_out_of_range():
    with pytest.raises(ValueError, match="0..100"):
        percentile([1, 2], 101)
    with pytest.raises(ValueError):
        percentile([1, 2], -1)


def test_describe_keys_and_values():
    d = describe([1, 2, 3, 4, 5])
    assert d["count"] == 5 and d["mean"] == 3 and d["min"] == 1 and d["max"] == 5
    assert d["25%"] == 2 and d["50%"] == 3 and d["75%"] == 4
    assert d["std"] == pytest.approx(2.5 ** 0.5)


def test_describe_single_value_std_zero():
    assert describe([4])["std"] == 0.0
