"""Tokenizer: numbers, names, operators, parentheses, commas and ``=``."""
from __future__ import annotations

from dataclasses import dataclass

OPERATORS = ["**", "==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "!", "(", ")", ",", "=", "?", ":"]


class LexError(SyntaxError):
    """An unexpected character; ``pos`` is its 0-based offset."""

    def __init__(self, message: str, pos: int):
        super().__init__(f"{message} at position {pos}")
        self.pos = pos


@dataclass(frozen=True)
class Token:
    kind: str   # "num", "name", "op", "end"
    text: str
    pos: int


def tokenize(source: str) -> list[Token]:
    """Split ``source`` into tokens ending with an ``end`` token; ``#`` starts a comment to end of line."""
    tokens: list[Token] = []
    i = 0
    n = len(source)
    while i < n:
        ch = source[i]
        if ch.isspace():
            i += 1
            continue
        if ch == "#":
            while i < n and source[i] != "\n":
                i += 1
            continue
        if ch.isdigit() or (ch == "." and i + 1 < n and source[i + 1].isdigit()):
            start = i
            seen_dot = False
            while i < n and (source[i].isdigit() or (source[i] == "." and not seen_dot)):
                if source[i] == ".":
                    seen_dot = True
                i += 1
            tokens.append(Token("num", source[start:i], start))
            continue
        if ch.isalpha() or ch == "_":
            start = i
            while i < n and (source[i].isalnum() or source[i] == "_"):
                i += 1
            tokens.append(Token("name", source[start:i], start))
            continue
        for op in OPERATORS:
            if source.startswith(op, i):
                tokens.append(Token("op", op, i))
                i += len(op)
                break
        else:
            raise LexError(f"unexpected character {ch!r}", i)
    tokens.append(Token("end", "", n))
    return tokens
