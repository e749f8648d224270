import math

import pytest

from calcium import EvalError, Interpreter, evaluate


def test_arithmetic():
    assert evaluate("1 + 2 * 3 - 4") == 3


def test_division_exact_is_int():
    assert evaluate("6 / 3") == 2 and isinstance(evaluate("6 / 3"), int)


def test_division_inexact_is_float():
    assert evaluate("7 / 2") == 3.5


def test_modulo():
    assert evaluate("17 % 5") == 2


def test_division_by_zero():
    with pytest.raises(EvalError, match="division by zero"):
        evaluate("1 / 0")
    with pytest.raises(EvalError):
        evaluate("1 % 0")


def test_power_and_unary():
    assert evaluate("2 ** 3 ** 2") == 512
    assert evaluate("-2 ** 2") == -4
    assert evaluate("(-2) ** 2") == 4


def test_comparisons():
    assert evaluate("3 > 2") is True and evaluate("3 >= 3") is True
    assert evaluate("2 < 2") is False and evaluate("2 <= 2") is True
    assert evaluate("1 == 1.0") is True and evaluate("1 != 1") is False


def test_not():
    assert evaluate("!0") is True and evaluate("!(1 < 2)") is False


def test_logic_short_circuit():
    assert evaluate("0 && undefined_name") == 0
    assert evaluate("5 || undefined_name") == 5
    assert evaluate("1 && 7") == 7
    assert evaluate("0 || 0") == 0


def test_conditional_only_evaluates_branch():
    assert evaluate("x > 0 ? 1 : missing", x=3) == 1
    assert evaluate("x > 0 ? missing : -1", x=-3) == -1


def test_variables_and_undefined():
    assert evaluate("a * b", a=3, b=4) == 12
    with pytest.raises(EvalError, match="undefined variable 'zz'"):
        evaluate("zz + 1")


def test_pi_builtin_constant():
    assert evaluate("pi") == math.pi


def test_assignment_persists():
    it = Interpreter()
    assert it.run("x = 4") == 4
    assert it.run("y = x * 2 + 1") == 9
    assert it.variables["y"] == 9


def test_builtins():
    assert evaluate("abs(-3)") == 3
    assert evaluate("min(4, 2, 8)") == 2 and evaluate("max(4, 2, 8)") == 8
    assert evaluate("sqrt(16)") == 4.0
    assert evaluate("round(2.567, 2)") == 2.57


def test_clamp():
    assert evaluate("clamp(15, 0, 10)") == 10
    assert evaluate("clamp(-5, 0, 10)") == 0
    assert evaluate("clamp(5, 0, 10)") == 5
    with pytest.raises(EvalError, match="lo > hi"):
        evaluate("clamp(1, 5, 0)")


def test_sqrt_negative():
    with pytest.raises(EvalError, match="negative"):
        evaluate("sqrt(-1)")


def test_arity_checked():
    with pytest.raises(EvalError, match="arguments"):
        evaluate("abs(1, 2)")
    with pytest.raises(EvalError, match="arguments"):
        evaluate("max()")


def test_unknown_function():
    with pytest.raises(EvalError, match="unknown function"):
        evaluate("foo(1)")
