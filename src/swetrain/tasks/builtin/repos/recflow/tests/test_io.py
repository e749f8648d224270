import pytest

from recflow import Field, Schema, SchemaError, read_csv, write_csv


def test_read_basic():
    assert read_csv("a,b\n1,2\n3,4\n") == [{"a": "1", "b": "2"}, {"a": "3", "b": "4"}]


def test_read_strips_header_and_skips_blank_lines():
    assert read_csv(" a , b \n\n1,2\n,\n") == [{"a": "1", "b": "2"}]


def test_read_pads_short_rows():
    assert read_csv("a,b,c\n1\n") == [{"a": "1", "b": "", "c": ""}]


def test_read_rejects_long_rows():
    with pytest.raises(ValueError, match="row 3"):
        read_csv("a,b\n1,2\n1,2,3\n")


def test_read_duplicate_header():
    with pytest.raises(ValueError, match="duplicate"):
        read_csv("a,a\n1,2\n")


def test_read_empty_text():
    assert read_csv("") == []


def test_read_quoted_cells():
    assert read_csv('name,note\n"Smith, J","said ""hi"""\n') == [{"name": "Smith, J", "note": 'said "hi"'}]


def test_read_other_delimiter():
    assert read_csv("a;b\n1;2\n", delimiter=";") == [{"a": "1", "b": "2"}]


def test_read_with_schema():
    schema = Schema([Field("n", "int"), Field("ok", "bool")])
    assert read_csv("n,ok\n5,yes\n", schema) == [{"n": 5, "ok": True}]


def test_read_with_schema_error():
    with pytest.raises(SchemaError):
        read_csv("n\nfive\n", Schema([Field("n", "int")]))


def test_write_basic():
    assert write_csv([{"a": 1, "b": 2}]) == "a,b\n1,2\n"


def test_write_column_union_order():
    assert write_csv([{"a": 1}, {"b": 2, "a": 3}]) == "a,b\n1,\n3,2\n"


def test_write_none_and_bool():
    assert write_csv([{"x": None, "y": True}]) == "x,y\n,true\n"


def test_write_explicit_columns():
    assert write_csv([{"a": 1, "b": 2}], columns=["b"]) == "b\n2\n"


def test_roundtrip_quoting():
    recs = [{"t": 'a,"b"'}]
    assert read_csv(write_csv(recs)) == recs
