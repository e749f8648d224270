import pytest

from recflow import aggregate, dedupe, group_by, inner_join, left_join, select, sort_records, where

PEOPLE = [
    {"name": "ann", "dept": "eng", "age": 30, "salary": 100},
    {"name": "bob", "dept": "ops", "age": 25, "salary": 80},
    {"name": "cat", "dept": "eng", "age": 41, "salary": 120},
    {"name": "dan", "dept": "ops", "age": 25, "salary": None},
]


def names(recs):
    return [r["name"] for r in recs]


def test_where_equality():
    assert names(where(PEOPLE, dept="ops")) == ["bob", "dan"]


def test_where_gt_is_strict():
    assert names(where(PEOPLE, age__gt=30)) == ["cat"]


def test_where_ge_inclusive():
    assert names(where(PEOPLE, age__ge=30)) == ["ann", "cat"]


def test_where_lt_and_le():
    assert names(where(PEOPLE, age__lt=30)) == ["bob", "dan"]
    assert names(where(PEOPLE, age__le=25)) == ["bob", "dan"]


def test_where_ne_and_in():
    assert names(where(PEOPLE, dept__ne="eng")) == ["bob", "dan"]
    assert names(where(PEOPLE, name__in={"ann", "dan"})) == ["ann", "dan"]


def test_where_multiple_conditions_all_must_hold():
    assert names(where(PEOPLE, dept="eng", age__lt=35)) == ["ann"]


def test_where_missing_column_never_matches():
    assert where([{"a": 1}], b=None) == []


def test_where_unknown_operator():
    with pytest.raises(ValueError, match="unknown operator"):
        where(PEOPLE, age__between=3)


def test_select_and_rename():
    assert select(PEOPLE[:1], ["name", "zip"], rename={"name": "who"}) == [{"who": "ann", "zip": None}]


def test_sort_ascending_stable():
    assert names(sort_records(PEOPLE, ["age"])) == ["bob", "dan", "ann", "cat"]


def test_sort_descending():
    assert names(sort_records(PEOPLE, ["-age"])) == ["cat", "ann", "bob", "dan"]


def test_sort_multiple_keys():
    assert names(sort_records(PEOPLE, ["dept", "-age"])) == ["cat", "ann", "bob", "dan"]


def test_sort_none_last_even_descending():
    assert names(sort_records(PEOPLE, ["-salary"])) == ["cat", "ann", "bob", "dan"]


def test_dedupe_whole_record():
    assert dedupe([{"a": 1}, {"a": 1}, {"a": 2}]) == [{"a": 1}, {"a": 2}]


def test_dedupe_by_key_first():
    assert names(dedupe(PEOPLE, keys=["dept"])) == ["ann", "bob"]


def test_dedupe_by_key_last():
    assert names(dedupe(PEOPLE, keys=["dept"], keep="last")) == ["cat", "dan"]


def test_dedupe_bad_keep():
    with pytest.raises(ValueError):
        dedupe(PEOPLE, keep="middle")


def test_group_by_order():
    groups = group_by(PEOPLE, "dept")
    assert list(groups) == ["eng", "ops"] and names(groups["ops"]) == ["bob", "dan"]


def test_aggregate_functions():
    out = aggregate(PEOPLE, "dept", n=("name", "count"), total=("salary", "sum"),
                    lo=("age", "min"), hi=("age", "max"), avg=("salary", "mean"))
    assert out[0] == {"dept": "eng", "n": 2, "total": 220, "lo": 30, "hi": 41, "avg": 110}
    assert out[1] == {"dept": "ops", "n": 2, "total": 80, "lo": 25, "hi": 25, "avg": 80}


def test_aggregate_all_none_group():
    out = aggregate([{"g": 1, "v": None}], "g", s=("v", "sum"), c=("v", "count"))
    assert out == [{"g": 1, "s": None, "c": 0}]


def test_aggregate_unknown_func():
    with pytest.raises(ValueError, match="unknown aggregate"):
        aggregate(PEOPLE, "dept", x=("age", "median"))


DEPTS = [{"dept": "eng", "floor": 3}, {"dept": "hr", "floor": 1}]


def test_inner_join():
    out = inner_join(PEOPLE, DEPTS, on="dept")
    assert names(out) == ["ann", "cat"] and all(r["floor"] == 3 for r in out)


def test_left_join_keeps_unmatched():
    out = left_join(PEOPLE, DEPTS, on="dept")
    assert names(out) == ["ann", "bob", "cat", "dan"]
    assert out[1]["floor"] is None


def test_join_clashing_column_suffix():
    out = inner_join([{"k": 1, "v": "L"}], [{"k": 1, "v": "R"}], on="k")
    assert out == [{"k": 1, "v": "L", "v_right": "R"}]


def test_join_multiple_matches():
    out = inner_join([{"k": 1}], [{"k": 1, "x": 1}, {"k": 1, "x": 2}], on="k")
    assert [r["x"] for r in out] == [1, 2]
