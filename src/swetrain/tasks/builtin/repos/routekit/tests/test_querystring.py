from routekit import build_query, parse_query, percent_decode, percent_encode


def test_encode_keeps_unreserved():
    assert percent_encode("abc-XYZ_0.9~") == "abc-XYZ_0.9~", "unreserved characters must pass through"


def test_encode_space_default_is_percent20():
    assert percent_encode("a b") == "a%20b"


def test_encode_space_as_plus():
    assert percent_encode("a b", plus_for_space=True) == "a+b"


def test_encode_utf8_multibyte_uppercase_hex():
    assert percent_encode("é") == "%C3%A9", "é is two UTF-8 bytes, upper-case hex"


def test_encode_low_byte_pads_hex():
    assert percent_encode("\n") == "%0A", "bytes below 0x10 need a leading zero"


def test_decode_basic_escape():
    assert percent_decode("a%2Fb") == "a/b"


def test_decode_lowercase_hex():
    assert percent_decode("%c3%a9") == "é"


def test_decode_escape_at_very_end():
    assert percent_decode("x%41") == "xA", "an escape ending exactly at the end of the string decodes"


def test_decode_incomplete_escape_is_literal():
    assert percent_decode("100%") == "100%"
    assert percent_decode("%4") == "%4"


def test_decode_invalid_hex_is_literal():
    assert percent_decode("%zz1") == "%zz1"


def test_decode_plus_only_when_asked():
    assert percent_decode("a+b") == "a+b"
    assert percent_decode("a+b", plus_as_space=True) == "a b"


def test_roundtrip_encode_decode():
    text = "name=José & co/50%"
    assert percent_decode(percent_encode(text)) == text


def test_parse_query_multi_values_in_order():
    assert parse_query("a=1&b=2&a=3") == {"a": ["1", "3"], "b": ["2"]}


def test_parse_query_strips_question_mark():
    assert parse_query("?x=1") == {"x": ["1"]}


def test_parse_query_empty_string():
    assert parse_query("") == {}
    assert parse_query("?") == {}


def test_parse_query_plus_and_escapes():
    assert parse_query("q=hello+world%21") == {"q": ["hello world!"]}


def test_parse_query_drops_blank_by_default():
    assert parse_query("a=&b=1&c") == {"b": ["1"]}


def test_parse_query_keep_blank():
    assert parse_query("a=&b=1&c", keep_blank=True) == {"a": [""], "b": ["1"], "c": [""]}


def test_parse_query_value_may_contain_equals():
    assert parse_query("expr=a=b") == {"expr": ["a=b"]}


def test_parse_query_skips_empty_keys_and_parts():
    assert parse_query("&&=v&k=1&") == {"k": ["1"]}


def test_build_query_sorted_keys():
    assert build_query({"b": 2, "a": 1}) == "a=1&b=2"


def test_build_query_list_repeats_key():
    assert build_query({"t": ["x", "y"]}) == "t=x&t=y"


def test_build_query_skips_none():
    assert build_query({"a": None, "b": [None, "1"]}) == "b=1"


def test_build_query_booleans_and_spaces():
    assert build_query({"on": True, "off": False, "s": "a b"}) == "off=false&on=true&s=a+b"


def test_build_then_parse_roundtrip():
    params = {"name": "Zoë", "tags": ["a&b", "c"]}
    assert parse_query(build_query(params)) == {"name": ["Zoë"], "tags": ["a&b", "c"]}
