from htmlmini import escape, strip_tags, unescape


def test_escape_basic():
    assert escape("<a href='x'>&</a>") == "&lt;a href=&#x27;x&#x27;&gt;&amp;&lt;/a&gt;"


def test_escape_ampersand_first():
    assert escape("&lt;") == "&amp;lt;", "existing entities must be double-escaped"


def test_escape_without_quotes():
    assert escape('"hi"', quote=False) == '"hi"'


def test_escape_non_string():
    assert escape(5) == "5"


def test_unescape_named():
    assert unescape("&lt;b&gt; &amp; &quot;x&quot;") == '<b> & "x"'


def test_unescape_decimal_and_hex():
    assert unescape("&#65;&#x42;&#X43;") == "ABC"


def test_unescape_unknown_left_alone():
    assert unescape("&bogus; &") == "&bogus; &"


def test_unescape_missing_semicolon():
    assert unescape("&amp") == "&amp"


def test_unescape_empty_numeric():
    assert unescape("&#;&#x;") == "&#;&#x;"


def test_unescape_bad_digits():
    assert unescape("&#12a;") == "&#12a;"


def test_unescape_too_large_codepoint():
    assert unescape("&#x110000;") == "&#x110000;"
    assert unescape("&#x10FFFF;") == "\U0010ffff"


def test_unescape_roundtrip():
    text = "<p class=\"a\">Tom & 'Jerry'</p>"
    assert unescape(escape(text)) == text


def test_unescape_far_semicolon_not_entity():
    assert unescape("&abcdefghijkl;") == "&abcdefghijkl;"


def test_strip_tags():
    assert strip_tags("<p>Hello <b>world</b></p>") == "Hello world"


def test_strip_tags_collapses_whitespace_and_unescapes():
    assert strip_tags("<div>\n  a &amp;\tb  </div>") == "a & b"


def test_strip_tags_stray_gt_kept():
    assert strip_tags("1 > 0") == "1 > 0"
