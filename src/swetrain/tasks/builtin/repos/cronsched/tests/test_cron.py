from datetime import datetime

import pytest

from cronsched import CronError, CronExpr, parse_field

# 2024-01-01 is a Monday.
MON = datetime(2024, 1, 1, 10, 30)


def test_field_star():
    assert parse_field("*", 0, 5) == {0, 1, 2, 3, 4, 5}


def test_field_list_and_range():
    assert parse_field("1,3-5", 0, 10) == {1, 3, 4, 5}


def test_field_step_star():
    assert parse_field("*/15", 0, 59) == {0, 15, 30, 45}


def test_field_range_step():
    assert parse_field("10-20/5", 0, 59) == {10, 15, 20}


def test_field_start_step_runs_to_max():
    assert parse_field("50/5", 0, 59) == {50, 55}


def test_field_bounds_inclusive():
    assert parse_field("0,59", 0, 59) == {0, 59}
    with pytest.raises(CronError, match="outside"):
        parse_field("60", 0, 59)


def test_field_names():
    assert parse_field("jan-mar", 1, 12, {"jan": 1, "feb": 2, "mar": 3}) == {1, 2, 3}


def test_field_errors():
    for bad in ["", "1,,2", "*/0", "a", "5-1", "*/x"]:
        with pytest.raises(CronError):
            parse_field(bad, 0, 59)


def test_expr_field_count():
    with pytest.raises(CronError, match="5 fields"):
        CronExpr("* * * *")


def test_weekday_seven_is_sunday():
    assert CronExpr("0 0 * * 7").weekdays == {0}


def test_alias():
    assert CronExpr("@daily").minutes == {0} and CronExpr("@daily").hours == {0}


def test_matches_simple():
    e = CronExpr("30 10 * * *")
    assert e.matches(MON) and not e.matches(MON.replace(minute=31))


def test_matches_weekday_names():
    e = CronExpr("* * * * mon-fri")
    assert e.matches(MON)
    assert not e.matches(datetime(2024, 1, 6, 12, 0))  # Saturday


def test_matches_sunday_zero():
    assert CronExpr("* * * * 0").matches(datetime(2024, 1, 7, 0, 0))


def test_dom_or_dow_when_both_restricted():
    e = CronExpr("0 0 15 * fri")
    assert e.matches(datetime(2024, 1, 15, 0, 0))   # Monday the 15th
    assert e.matches(datetime(2024, 1, 5, 0, 0))    # Friday the 5th
    assert not e.matches(datetime(2024, 1, 6, 0, 0))


def test_dom_only_restricted_uses_and():
    e = CronExpr("0 0 15 * *")
    assert not e.matches(datetime(2024, 1, 5, 0, 0))


def test_next_after_is_strict():
    e = CronExpr("30 10 * * *")
    assert e.next_after(MON) == datetime(2024, 1, 2, 10, 30)


def test_next_after_same_hour():
    assert CronExpr("45 * * * *").next_after(MON) == datetime(2024, 1, 1, 10, 45)


def test_next_after_ignores_seconds():
    assert CronExpr("* * * * *").next_after(datetime(2024, 1, 1, 10, 30, 59)) == datetime(2024, 1, 1, 10, 31)


def test_next_after_month_rollover():
    assert CronExpr("0 0 1 * *").next_after(datetime(2024, 1, 31, 23, 59)) == datetime(2024, 2, 1, 0, 0)


def test_next_after_year_rollover():
    assert CronExpr("0 9 * jan *").next_after(datetime(2024, 2, 1)) == datetime(2025, 1, 1, 9, 0)


def test_next_after_leap_day():
    assert CronExpr("0 0 29 2 *").next_after(datetime(2024, 3, 1)) == datetime(2028, 2, 29, 0, 0)


def test_next_after_impossible():
    with pytest.raises(CronError, match="no firing time"):
        CronExpr("0 0 31 2 *").next_after(MON)


def test_upcoming():
    e = CronExpr("*/20 9 * * *")
    assert e.upcoming(datetime(2024, 1, 1, 9, 10), 3) == [
        datetime(2024, 1, 1, 9, 20), datetime(2024, 1, 1, 9, 40), datetime(2024, 1, 2, 9, 0)]
