import pytest

from htmlmini import Markup, Template, TemplateError, render


class User:
    def __init__(self, name):
        self.name = name


def test_plain_text_unchanged():
    assert render("hello") == "hello"


def test_variable_escaped():
    assert render("<p>{{ x }}</p>", x="<b>") == "<p>&lt;b&gt;</p>"


def test_safe_filter_and_markup_not_escaped():
    assert render("{{ x|safe }}{{ y }}", x="<i>", y=Markup("<u>")) == "<i><u>"


def test_missing_variable_renders_empty():
    assert render("[{{ nope }}]") == "[]"


def test_dotted_lookup_dict_attr_index():
    assert render("{{ a.b }} {{ u.name }} {{ xs.1 }} {{ xs.-1 }}", a={"b": 1}, u=User("ann"), xs=[5, 6, 7]) == "1 ann 6 7"


def test_index_out_of_range_is_empty():
    assert render("[{{ xs.3 }}]", xs=[1, 2, 3]) == "[]"


def test_literals():
    assert render("{{ 'hi'|upper }} {{ 42 }}") == "HI 42"


def test_filters_chain():
    assert render("{{ s|lower|title }}", s="hELLO wORLD") == "Hello World"


def test_default_filter():
    assert render("{{ a|default:none }}/{{ b|default:none }}", a="", b="x") == "none/x"


def test_default_keeps_zero():
    assert render("{{ n|default:none }}", n=0) == "0"


def test_truncate_filter():
    assert render("{{ s|truncate:8 }}", s="abcdefghijk") == "abcde..."
    assert render("{{ s|truncate:8 }}", s="abcdefgh") == "abcdefgh"


def test_truncate_default_limit():
    assert render("{{ s|truncate }}", s="x" * 21) == "x" * 17 + "..."


def test_join_and_length():
    assert render("{{ xs|join }}|{{ xs|join:-}}|{{ xs|length }}", xs=[1, 2, 3]) == "1, 2, 3|1-2-3|3"


def test_unknown_filter():
    with pytest.raises(TemplateError, match="unknown filter"):
        render("{{ x|shout }}", x=1)


def test_if_true_false():
    t = Template("{% if ok %}yes{% else %}no{% endif %}")
    assert t.render(ok=True) == "yes" and t.render(ok=False) == "no"


def test_if_without_else():
    assert render("a{% if x %}b{% endif %}c", x=[]) == "ac"


def test_if_not():
    assert render("{% if not items %}empty{% endif %}", items=[]) == "empty"


def test_for_loop_with_loop_vars():
    out = render("{% for x in xs %}{{ loop.index }}:{{ x }}{% if not loop.last %},{% endif %}{% endfor %}", xs=["a", "b", "c"])
    assert out == "1:a,2:b,3:c"


def test_for_loop_first():
    assert render("{% for x in xs %}{% if loop.first %}[{% endif %}{{ x }}{% endfor %}", xs=[1, 2]) == "[12"


def test_for_over_missing_is_empty():
    assert render("{% for x in nope %}x{% endfor %}") == ""


def test_nested_loops_scope():
    out = render("{% for r in rows %}{% for c in r %}{{ c }}{% endfor %};{% endfor %}{{ c }}", rows=[[1, 2], [3]])
    assert out == "12;3;", "loop variables must not leak out of the loop"


def test_unclosed_if():
    with pytest.raises(TemplateError, match="unclosed"):
        Template("{% if x %}a")


def test_unclosed_for():
    with pytest.raises(TemplateError, match="unclosed"):
        Template("{% for x in y %}a")


def test_stray_endif():
    with pytest.raises(TemplateError):
        Template("a{% endif %}")


def test_bad_for_syntax():
    with pytest.raises(TemplateError, match="bad for"):
        Template("{% for x of y %}{% endfor %}")


def test_unknown_statement():
    with pytest.raises(TemplateError, match="unknown statement"):
        Template("{% while x %}")
