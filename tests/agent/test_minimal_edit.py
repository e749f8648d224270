"""The minimal unique str_replace edit of the scripted repair demonstrations (issue 16)."""

from __future__ import annotations

import pytest

from swetrain.agent.scripted_repair import edit_strings, minimal_edit

SRC = '''class Switch:
    def update(self, value):
        if not self.on and value > self.high:
            self.on = True
        elif self.on and value > self.low:
            self.on = False
        return value - 1

    def reset(self):
        self.on = False
'''


def _apply(source: str, edit: tuple[str, str]) -> str:
    old, new = edit
    assert source.count(old) == 1
    return source.replace(old, new)


@pytest.mark.parametrize(
    ("line", "new_line", "want"),
    [
        (5, "        elif self.on and value <= self.low:", ("> self.low", "<= self.low")),  # `> self` is not unique
        (3, "        if self.on and value > self.high:", ("not self", "self")),  # a removal
        (7, "        return value + 1", ("-", "+")),
        (7, "        return value - 2", ("1", "2")),
        (3, "        if not self.on and value > self.high or x:", ("high", "high or x")),  # an insertion
    ],
)
def test_minimal_edit_is_the_shortest_unique_span_and_makes_the_same_file(line, new_line, want):
    edit = minimal_edit(SRC, line, new_line)
    assert edit == want
    lines = SRC.splitlines()
    assert _apply(SRC, edit) == "\n".join(lines[: line - 1] + [new_line] + lines[line:]) + "\n"


def test_without_a_unique_span_edit_strings_falls_back_to_whole_lines():
    # `self.on = False` is also line 10 (less indented); indentation is never an end of a span
    assert minimal_edit(SRC, 6, "            self.on = True") is None
    edit = edit_strings(SRC, 6, "            self.on = True")
    assert edit == ("            self.on = False", "            self.on = True")
    assert _apply(SRC, edit).splitlines()[9] == "        self.on = False"
    two = "x = 1\ny = 2\nx = 1\n"  # the line repeats: its neighbour makes it unique
    assert minimal_edit(two, 1, "x = 3") is None
    assert _apply(two, edit_strings(two, 1, "x = 3")) == "x = 3\ny = 2\nx = 1\n"
    with pytest.raises(ValueError):
        # overlapping repeats count too (str.count would see "x = 1\nx = 1" once here)
        edit_strings("x = 1\nx = 1\nx = 1\n", 2, "x = 3")


def test_string_literals_and_two_character_operators_are_single_units():
    src = 'def f(tok):\n    if tok.text != "!":\n        return 1\n    return tok.text != "?"\n'
    assert minimal_edit(src, 2, '    if tok.text == "!":') == ('!= "!"', '== "!"')
    assert minimal_edit(src, 3, "        return 1") is None  # no change
