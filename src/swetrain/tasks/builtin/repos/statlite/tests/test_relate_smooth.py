import pytest

from statlite import covariance, ewma, linear_fit, moving_average, pearson, rank, zscores


def test_covariance():
    assert covariance([1, 2, 3], [2, 4, 6]) == pytest.approx(2.0)


def test_covariance_length_mismatch():
    with pytest.raises(ValueError, match="length"):
        covariance([1, 2], [1, 2, 3])


def test_covariance_needs_two_pairs():
    with pytest.raises(ValueError, match="at least 2"):
        covariance([1], [1])


def test_pearson_perfect_positive():
    assert pearson([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)


def test_pearson_perfect_negative():
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_pearson_partial():
    assert pearson([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == pytest.approx(0.8)


def test_pearson_constant_raises():
    with pytest.raises(ValueError, match="constant"):
        pearson([1, 1, 1], [1, 2, 3])


def test_linear_fit():
    slope, intercept = linear_fit([0, 1, 2, 3], [1, 3, 5, 7])
    assert slope == pytest.approx(2.0) and intercept == pytest.approx(1.0)


def test_linear_fit_vertical_raises():
    with pytest.raises(ValueError, match="slope"):
        linear_fit([2, 2], [1, 5])


def test_zscores():
    z = zscores([2, 4, 6])
    assert z == pytest.approx([-1.0, 0.0, 1.0])


def test_zscores_constant():
    assert zscores([3, 3, 3]) == [0.0, 0.0, 0.0]


def test_moving_average():
    assert moving_average([1, 2, 3, 4, 5], 2) == [1.5, 2.5, 3.5, 4.5]


def test_moving_average_window_equals_length():
    assert moving_average([1, 2, 3], 3) == [2.0]


def test_moving_average_window_too_big():
    assert moving_average([1, 2], 3) == []


def test_moving_average_bad_window():
    with pytest.raises(ValueError):
        moving_average([1], 0)


def test_ewma():
    assert ewma([10, 20, 20], 0.5) == pytest.approx([10, 15, 17.5])


def test_ewma_alpha_one_is_identity():
    assert ewma([1, 5, 2], 1.0) == [1, 5, 2]


def test_ewma_bad_alpha():
    for a in (0, 1.5):
        with pytest.raises(ValueError):
            ewma([1], a)


def test_rank_simple():
    assert rank([30, 10, 20]) == [3, 1, 2]


def test_rank_ties_average():
    assert rank([10, 20, 20, 5]) == [2, 3.5, 3.5, 1]


def test_rank_all_tied():
    assert rank([7, 7, 7]) == [2, 2, 2]
