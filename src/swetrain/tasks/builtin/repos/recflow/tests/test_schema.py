import pytest

from recflow import Field, Schema, SchemaError, coerce


def test_coerce_int_strips():
    assert coerce(" 42 ", "int") == 42


def test_coerce_int_from_integral_float():
    assert coerce(3.0, "int") == 3


def test_coerce_int_rejects_fraction():
    with pytest.raises(ValueError, match="integral"):
        coerce(3.5, "int")


def test_coerce_int_rejects_bool():
    with pytest.raises(ValueError):
        coerce(True, "int")


def test_coerce_float():
    assert coerce("2.5", "float") == 2.5


def test_coerce_bool_words():
    assert coerce("Yes", "bool") is True
    assert coerce(" f ", "bool") is False
    assert coerce("1", "bool") is True


def test_coerce_bool_passthrough():
    assert coerce(False, "bool") is False


def test_coerce_bool_rejects_other():
    with pytest.raises(ValueError, match="boolean"):
        coerce("maybe", "bool")


def test_coerce_str_none_is_empty():
    assert coerce(None, "str") == ""
    assert coerce(5, "str") == "5"


def test_coerce_unknown_kind():
    with pytest.raises(ValueError, match="unknown kind"):
        coerce("x", "date")


def test_field_required():
    with pytest.raises(ValueError, match="required"):
        Field("a", "int").check("  ")


def test_field_optional_default():
    assert Field("a", "int", required=False, default=7).check("") == 7


def test_field_minimum_inclusive():
    f = Field("age", "int", minimum=0, maximum=120)
    assert f.check("0") == 0 and f.check("120") == 120


def test_field_below_minimum():
    with pytest.raises(ValueError, match="below minimum"):
        Field("age", "int", minimum=0).check("-1")


def test_field_above_maximum():
    with pytest.raises(ValueError, match="above maximum"):
        Field("age", "int", maximum=120).check("121")


def test_field_choices():
    f = Field("c", choices=("red", "blue"))
    assert f.check("red") == "red"
    with pytest.raises(ValueError, match="not in"):
        f.check("green")


def test_schema_duplicate_field():
    with pytest.raises(ValueError, match="duplicate"):
        Schema([Field("a"), Field("a")])


def test_schema_validate_coerces_and_drops_unknown():
    s = Schema([Field("id", "int"), Field("name")])
    assert s.validate([{"id": "1", "name": "x", "junk": "?"}]) == [{"id": 1, "name": "x"}]


def test_schema_collects_all_errors_with_row_numbers():
    s = Schema([Field("id", "int"), Field("score", "float")])
    with pytest.raises(SchemaError) as info:
        s.validate([{"id": "1", "score": "1"}, {"id": "x", "score": ""}])
    assert [(r, f) for r, f, _ in info.value.errors] == [(2, "id"), (2, "score")]


def test_schema_strict_reports_unknown():
    s = Schema([Field("id", "int")], strict=True)
    with pytest.raises(SchemaError) as info:
        s.validate([{"id": "1", "b": 1, "a": 2}])
    assert [f for _, f, _ in info.value.errors] == ["a", "b"]


def test_schema_names():
    assert Schema([Field("x"), Field("y")]).names == ["x", "y"]
