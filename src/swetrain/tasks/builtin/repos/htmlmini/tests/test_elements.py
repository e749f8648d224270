import pytest

from htmlmini import Markup, class_names, element, render_attrs, style_string


def test_class_names_strings_and_dicts():
    assert class_names("btn  primary", {"active": True, "disabled": False}) == "btn primary active"


def test_class_names_flattens_and_dedupes():
    assert class_names(["a", ["b", "a"]], "b c", None, "") == "a b c"


def test_class_names_other_values():
    assert class_names(3) == "3"


def test_style_string():
    assert style_string({"font_size": 12, "color": "red", "margin": 0, "x": None}) == "font-size: 12px; color: red; margin: 0"


def test_style_string_bool_not_px():
    assert style_string({"flag": True}) == "flag: True"


def test_attrs_sorted_and_escaped():
    assert render_attrs({"title": 'a"b', "id": "x"}) == ' id="x" title="a&quot;b"'


def test_attrs_booleans_and_none():
    assert render_attrs({"disabled": True, "hidden": False, "alt": None}) == " disabled"


def test_attrs_class_underscore_and_dash():
    assert render_attrs({"class_": ["a", "b"], "data_id": 3}) == ' class="a b" data-id="3"'


def test_attrs_empty_class_omitted():
    assert render_attrs({"class_": {"x": False}}) == ""


def test_attrs_style_dict():
    assert render_attrs({"style": {"width": 10}}) == ' style="width: 10px"'


def test_element_escapes_text():
    assert element("p", "a < b") == "<p>a &lt; b</p>"


def test_element_markup_not_escaped():
    inner = element("b", "x")
    assert element("p", [inner, " & more"]) == "<p><b>x</b> &amp; more</p>"


def test_element_returns_markup():
    assert isinstance(element("i"), Markup)


def test_element_skips_none_children_and_numbers():
    assert element("li", [None, 1, 2]) == "<li>12</li>"


def test_element_single_number_child():
    assert element("span", 7) == "<span>7</span>"


def test_void_element():
    assert element("IMG", src="a.png", alt="") == '<img alt="" src="a.png">'


def test_void_element_with_children_rejected():
    with pytest.raises(ValueError, match="void"):
        element("br", "x")


def test_invalid_tag():
    with pytest.raises(ValueError, match="invalid tag"):
        element("a b")
