import pytest

from sensorbuf import (
    Debouncer, Hysteresis, adc_to_voltage, celsius_to_fahrenheit, convert_temperature, divider_input,
    median_filter, voltage_to_adc,
)


def test_debounce_needs_stable_reads():
    d = Debouncer(stable_reads=3)
    assert [d.update(x) for x in (True, True, True)] == [False, False, True]
    assert d.changes == 1


def test_debounce_glitch_ignored():
    d = Debouncer(stable_reads=3)
    assert [d.update(x) for x in (True, True, False, True, True)] == [False] * 5


def test_debounce_single_read():
    d = Debouncer(stable_reads=1)
    assert d.update(True) is True and d.update(False) is False and d.changes == 2


def test_debounce_validation():
    with pytest.raises(ValueError):
        Debouncer(0)


def test_hysteresis_switching():
    h = Hysteresis(low=18, high=22)
    assert [h.update(v) for v in (20, 22, 20, 18.5, 18, 21)] == [False, True, True, True, False, False]


def test_hysteresis_initial_on():
    h = Hysteresis(1, 2, initial=True)
    assert h.update(1.5) is True


def test_hysteresis_validation():
    with pytest.raises(ValueError):
        Hysteresis(5, 5)


def test_median_filter_removes_spike():
    assert median_filter([1, 1, 9, 1, 1], 3) == [1, 1, 1, 1, 1]


def test_median_filter_edges_shrink():
    assert median_filter([1, 5, 2], 3) == [3, 2, 3.5]


def test_median_filter_window_one_identity():
    assert median_filter([3, 1, 2], 1) == [3, 1, 2]


def test_median_filter_bad_window():
    for w in (0, 2):
        with pytest.raises(ValueError):
            median_filter([1], w)


def test_c_to_f():
    assert celsius_to_fahrenheit(100) == 212 and celsius_to_fahrenheit(-40) == -40


def test_convert_all_pairs():
    assert convert_temperature(32, "F", "C") == 0
    assert convert_temperature(0, "c", "k") == pytest.approx(273.15)
    assert convert_temperature(373.15, "K", "F") == pytest.approx(212)
    assert convert_temperature(25, "C", "C") == 25


def test_convert_absolute_zero_boundary():
    assert convert_temperature(0, "K", "C") == pytest.approx(-273.15)
    with pytest.raises(ValueError, match="absolute zero"):
        convert_temperature(-274, "C", "K")


def test_convert_unknown_unit():
    with pytest.raises(ValueError):
        convert_temperature(1, "X", "C")
    with pytest.raises(ValueError):
        convert_temperature(1, "C", "R")


def test_adc_scaling():
    assert adc_to_voltage(4095) == pytest.approx(3.3)
    assert adc_to_voltage(0) == 0
    assert adc_to_voltage(512, bits=10, vref=5.0) == pytest.approx(512 * 5 / 1023)


def test_adc_range():
    with pytest.raises(ValueError):
        adc_to_voltage(4096)
    with pytest.raises(ValueError):
        adc_to_voltage(-1)


def test_voltage_to_adc_round_and_clamp():
    assert voltage_to_adc(1.65) == 2048
    assert voltage_to_adc(5.0) == 4095
    assert voltage_to_adc(-1) == 0


def test_divider():
    assert divider_input(2.5, 10_000, 10_000) == 5.0
    with pytest.raises(ValueError):
        divider_input(1, 1, 0)
