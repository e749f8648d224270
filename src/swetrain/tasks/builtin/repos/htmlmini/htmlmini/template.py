"""A tiny template engine: ``{{ expr|filter }}``, ``{% if %}/{% else %}/{% endif %}``, ``{% for x in xs %}``."""
from __future__ import annotations

import re
from typing import Any

from .elements import Markup
from .escape import escape

_TOKEN = re.compile(r"({{.*?}}|{%.*?%})", re.S)


class TemplateError(ValueError):
    """Malformed template or unknown filter."""


def _truncate(value: Any, arg: str | None) -> str:
    limit = int(arg) if arg else 20
    text = str(value)
    if len(text) <= limit:
        return text
    return text[: max(limit - 3, 0)] + "..."


FILTERS = {
    "upper": lambda v, a: str(v).upper(),
    "lower": lambda v, a: str(v).lower(),
    "title": lambda v, a: str(v).title(),
    "length": lambda v, a: len(v),
    "default": lambda v, a: v if v not in (None, "") else (a or ""),
    "truncate": _truncate,
    "join": lambda v, a: (a if a is not None else ", ").join(str(x) for x in v),
    "safe": lambda v, a: Markup(str(v)),
}


def lookup(context: dict[str, Any], path: str) -> Any:
    """Resolve ``a.b.0`` through dict keys, attributes and list indices; missing -> ``None``."""
    path = path.strip()
    if path.startswith(('"', "'")) and path.endswith(path[0]) and len(path) >= 2:
        return path[1:-1]
    if path.lstrip("-").isdigit():
        return int(path)
    current: Any = context
    for part in path.split("."):
        if isinstance(current, dict):
            current = current.get(part)
        elif isinstance(current, (list, tuple)) and part.lstrip("-").isdigit():
            idx = int(part)
            current = current[idx] if -len(current) <= idx < len(current) else None
        else:
            current = getattr(current, part, None)
        if current is None:
            return None
    return current


def evaluate(expr: str, context: dict[str, Any]) -> Any:
    """Evaluate ``name|filter:arg|filter`` against ``context``."""
    pieces = expr.split("|")
    value = lookup(context, pieces[0])
    for piece in pieces[1:]:
        name, sep, arg = piece.strip().partition(":")
        if name not in FILTERS:
            raise TemplateError(f"unknown filter {name!r}")
        value = FILTERS[name](value, arg if sep else None)
    return value


def _truthy(expr: str, context: dict[str, Any]) -> bool:
    expr = expr.strip()
    if expr.startswith("not "):
        return not _truthy(expr[4:], context)
    return bool(evaluate(expr, context))


class Template:
    """A parsed template; ``render(**context)`` produces the output string (auto-escaped)."""

    def __init__(self, source: str) -> None:
        self.source = source
        tokens = [t for t in _TOKEN.split(source) if t != ""]
        self.tree, pos, end = self._parse(tokens, 0, ())
        if end is not None:
            raise TemplateError(f"unexpected {{% {end} %}}")

    def _parse(self, tokens: list[str], pos: int, stop: tuple[str, ...]) -> tuple[list, int, str | None]:
        nodes: list = []
        while pos < len(tokens):
            tok = tokens[pos]
            if tok.startswith("{%"):
                stmt = tok[2:-2].strip()
                word = stmt.split(" ", 1)[0]
                if word in stop or word in ("else", "endif", "endfor"):
                    return nodes, pos + 1, stmt
                if word == "if":
                    body, pos, end = self._parse(tokens, pos + 1, ("else", "endif"))
                    other: list = []
                    if end == "else":
                        other, pos, end = self._parse(tokens, pos, ("endif",))
                    if end != "endif":
                        raise TemplateError("unclosed {% if %}")
                    nodes.append(("if", stmt[3:].strip(), body, other))
                    continue
                if word == "for":
                    parts = stmt.split()
                    if len(parts) != 4 or parts[2] != "in":
                        raise TemplateError(f"bad for statement: {stmt!r}")
                    body, pos, end = self._parse(tokens, pos + 1, ("endfor",))
                    if end != "endfor":
                        raise TemplateError("unclosed {% for %}")
                    nodes.append(("for", parts[1], parts[3], body))
                    continue
                raise TemplateError(f"unknown statement {word!r}")
            if tok.startswith("{{"):
                nodes.append(("expr", tok[2:-2].strip()))
            else:
                nodes.append(("text", tok))
            pos += 1
        return nodes, pos, None

    def _render(self, nodes: list, context: dict[str, Any], out: list[str]) -> None:
        for node in nodes:
            kind = node[0]
            if kind == "text":
                out.append(node[1])
            elif kind == "expr":
                value = evaluate(node[1], context)
                if value is None:
                    continue
                out.append(value if isinstance(value, Markup) else escape(value))
            elif kind == "if":
                self._render(node[2] if _truthy(node[1], context) else node[3], context, out)
            else:
                _, var, seq_expr, body = node
                items = list(evaluate(seq_expr, context) or [])
                for index, item in enumerate(items):
                    scope = dict(context)
                    scope[var] = item
                    scope["loop"] = {"index": index + 1, "first": index == 0, "last": index == len(items) - 1}
                    self._render(body, scope, out)

    def render(self, **context: Any) -> str:
        out: list[str] = []
        self._render(self.tree, context, out)
        return "".join(out)


def render(source: str, **context: Any) -> str:
    """Parse ``source`` and render it with ``context``."""
    return Template(source).render(**context)
