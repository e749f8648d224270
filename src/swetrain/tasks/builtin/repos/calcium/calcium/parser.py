"""Precedence-climbing parser producing tuples as AST nodes.

Nodes: ``("num", value)``, ``("var", name)``, ``("neg", x)``, ``("not", x)``, ``("bin", op, l, r)``,
``("call", name, [args])``, ``("assign", name, x)``, ``("cond", test, yes, no)``.
"""
from __future__ import annotations

from typing import Any

from .lexer import Token, tokenize

# precedence, right-associative?
BINARY = {
    "||": (1, False), "&&": (2, False),
    "==": (3, False), "!=": (3, False),
    "<": (4, False), "<=": (4, False), ">": (4, False), ">=": (4, False),
    "+": (5, False), "-": (5, False),
    "*": (6, False), "/": (6, False), "%": (6, False),
    "**": (8, True),
}
UNARY_PREC = 7


class ParseError(SyntaxError):
    """Unexpected token; ``pos`` is its offset."""

    def __init__(self, message: str, pos: int):
        super().__init__(f"{message} at position {pos}")
        self.pos = pos


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def take(self, text: str | None = None) -> Token:
        tok = self.tok
        if text is not None and tok.text != text:
            raise ParseError(f"expected {text!r} but found {tok.text or 'end of input'!r}", tok.pos)
        self.i += 1
        return tok

    def statement(self) -> Any:
        if self.tok.kind == "name" and self.tokens[self.i + 1].text == "=":
            name = self.take().text
            self.take("=")
            return ("assign", name, self.statement())
        return self.conditional()

    def conditional(self) -> Any:
        test = self.expression(1)
        if self.tok.text == "?":
            self.take("?")
            yes = self.conditional()
            self.take(":")
            no = self.conditional()
            return ("cond", test, yes, no)
        return test

    def expression(self, min_prec: int) -> Any:
        left = self.unary()
        while self.tok.kind == "op" and self.tok.text in BINARY:
            op = self.tok.text
            prec, right_assoc = BINARY[op]
            if prec < min_prec:
                break
            self.take()
            right = self.expression(prec if right_assoc else prec + 1)
            left = ("bin", op, left, right)
        return left

    def unary(self) -> Any:
        if self.tok.text == "-":
            self.take()
            return ("neg", self.expression(UNARY_PREC))
        if self.tok.text == "!":
            self.take()
            return ("not", self.expression(UNARY_PREC))
        return self.primary()

    def primary(self) -> Any:
        tok = self.tok
        if tok.kind == "num":
            self.take()
            return ("num", float(tok.text) if "." in tok.text else int(tok.text))
        if tok.kind == "name":
            self.take()
            if self.tok.text == "(":
                self.take("(")
                args = []
                if self.tok.text != ")":
                    args.append(self.conditional())
                    while self.tok.text == ",":
                        self.take(",")
                        args.append(self.conditional())
                self.take(")")
                return ("call", tok.text, args)
            return ("var", tok.text)
        if tok.text == "(":
            self.take("(")
            inner = self.conditional()
            self.take(")")
            return inner
        raise ParseError(f"unexpected {tok.text or 'end of input'!r}", tok.pos)


def parse(source: str) -> Any:
    """Parse one statement (an assignment ``x = expr`` or an expression) into an AST."""
    p = _Parser(tokenize(source))
    node = p.statement()
    if p.tok.kind != "end":
        raise ParseError(f"unexpected {p.tok.text!r}", p.tok.pos)
    return node
