"""Volatile values in command output (reprs' addresses, pytest's run time) are made constant."""

from __future__ import annotations

import pytest

from swetrain.env.stable import stable_output


@pytest.mark.parametrize("raw, stable", [
    ("where f = <calc.Cart object at 0x7fc68eed41d0>.f", "where f = <calc.Cart object at 0x...>.f"),
    ("<function mul at 0x10a2b3c4d>", "<function mul at 0x...>"),
    ("<bound method A.f of <A object at 0x7f01>>", "<bound method A.f of <A object at 0x...>>"),
    ("1 failed, 10 passed in 0.90s", "1 failed, 10 passed"),
    ("===== 2 passed, 1 warning in 75.03s (0:01:15) =====", "===== 2 passed, 1 warning ====="),
    ("no tests ran in 0.01s", "no tests ran"),
    ("3 errors in 1.20s", "3 errors"),
])
def test_volatile_values_are_constant(raw, stable):
    assert stable_output(raw) == stable


@pytest.mark.parametrize("text", [
    "COLOUR = 0xFFFFFF  # a hex literal in source code stays",
    "mask = value & 0x7f25370b2950",
    "the job finished in 3s",
    "tests/test_x.py::test_in_0 PASSED",
])
def test_other_text_is_left_alone(text):
    assert stable_output(text) == text
