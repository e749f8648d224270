"""Evaluation of calcium ASTs with variables and built-in functions."""
from __future__ import annotations

import math
from typing import Any, Callable

from .parser import parse


class EvalError(RuntimeError):
    """A runtime error: unknown name, division by zero, wrong argument count."""


def _clamp(x: float, lo: float, hi: float) -> float:
    if lo > hi:
        raise EvalError("clamp: lo > hi")
    return max(lo, min(hi, x))


BUILTINS: dict[str, tuple[Callable[..., Any], int, int]] = {
    # name: (function, min args, max args)
    "abs": (abs, 1, 1),
    "min": (min, 1, 99),
    "max": (max, 1, 99),
    "sqrt": (math.sqrt, 1, 1),
    "round": (round, 1, 2),
    "clamp": (_clamp, 3, 3),
}


class Interpreter:
    """Holds variables across statements; ``run`` executes a statement and returns its value."""

    def __init__(self, variables: dict[str, Any] | None = None) -> None:
        self.variables: dict[str, Any] = dict(variables or {})
        self.variables.setdefault("pi", math.pi)

    def run(self, source: str) -> Any:
        return self.eval(parse(source))

    def eval(self, node: Any) -> Any:
        kind = node[0]
        if kind == "num":
            return node[1]
        if kind == "var":
            if node[1] not in self.variables:
                raise EvalError(f"undefined variable {node[1]!r}")
            return self.variables[node[1]]
        if kind == "neg":
            return -self.eval(node[1])
        if kind == "not":
            return not self.eval(node[1])
        if kind == "assign":
            value = self.eval(node[2])
            self.variables[node[1]] = value
            return value
        if kind == "cond":
            return self.eval(node[2]) if self.eval(node[1]) else self.eval(node[3])
        if kind == "call":
            return self.call(node[1], [self.eval(a) for a in node[2]])
        if kind == "bin":
            return self.binary(node[1], node[2], node[3])
        raise EvalError(f"unknown node {kind!r}")

    def call(self, name: str, args: list[Any]) -> Any:
        if name not in BUILTINS:
            raise EvalError(f"unknown function {name!r}")
        fn, lo, hi = BUILTINS[name]
        if len(args) < lo or len(args) > hi:
            raise EvalError(f"{name}() takes {lo}..{hi} arguments, got {len(args)}")
        if name == "sqrt" and args[0] < 0:
            raise EvalError("sqrt of a negative number")
        return fn(*args)

    def binary(self, op: str, left_node: Any, right_node: Any) -> Any:
        if op == "&&":
            left = self.eval(left_node)
            return self.eval(right_node) if left else left
        if op == "||":
            left = self.eval(left_node)
            return left if left else self.eval(right_node)
        a, b = self.eval(left_node), self.eval(right_node)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op in ("/", "%"):
            if b == 0:
                raise EvalError("division by zero")
            if op == "%":
                return a % b
            return a // b if isinstance(a, int) and isinstance(b, int) and a % b == 0 else a / b
        if op == "**":
            return a ** b
        if op == "==":
            return a == b
        if op == "!=":
            return a != b
        if op == "<":
            return a < b
        if op == "<=":
            return a <= b
        if op == ">":
            return a > b
        if op == ">=":
            return a >= b
        raise EvalError(f"unknown operator {op!r}")


def evaluate(source: str, **variables: Any) -> Any:
    """Evaluate one statement with the given variables."""
    return Interpreter(variables).run(source)
