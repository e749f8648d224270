"""Path-pattern routing: ``/users/<int:uid>/posts/<slug>`` style patterns with typed parameters."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .querystring import percent_decode, percent_encode


class NotFound(LookupError):
    """No route matches the path."""


class MethodNotAllowed(LookupError):
    """A route matches the path but not the method; ``allowed`` lists the methods that would match."""

    def __init__(self, path: str, allowed: list[str]):
        super().__init__(f"method not allowed for {path!r}; allowed: {', '.join(allowed)}")
        self.allowed = allowed


def _conv_int(text: str) -> int:
    if not text or not (text.isdigit() or (text[0] == "-" and text[1:].isdigit() and len(text) > 1)):
        raise ValueError(text)
    return int(text)


def _conv_slug(text: str) -> str:
    if not text or any(not (c.isalnum() or c in "-_") for c in text) or not text.isascii():
        raise ValueError(text)
    return text.lower()


def _conv_str(text: str) -> str:
    if not text:
        raise ValueError(text)
    return text


CONVERTERS: dict[str, Callable[[str], Any]] = {"int": _conv_int, "slug": _conv_slug, "str": _conv_str}


def split_path(path: str) -> list[str]:
    """Split a path into percent-decoded segments, ignoring empty segments and ``.``; ``..`` pops one."""
    segments: list[str] = []
    for raw in path.split("/"):
        if raw == "" or raw == ".":
            continue
        if raw == "..":
            if segments:
                segments.pop()
            continue
        segments.append(percent_decode(raw))
    return segments


@dataclass
class Route:
    """One compiled pattern with its handler and the HTTP methods it accepts."""

    pattern: str
    handler: Any
    methods: tuple[str, ...] = ("GET",)
    name: str | None = None
    parts: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.methods = tuple(m.upper() for m in self.methods)
        self.parts = []
        seen: set[str] = set()
        for seg in split_path(self.pattern):
            if seg.startswith("<") and seg.endswith(">"):
                inner = seg[1:-1]
                conv, _, pname = inner.partition(":") if ":" in inner else ("str", "", inner)
                if conv not in CONVERTERS:
                    raise ValueError(f"unknown converter {conv!r} in pattern {self.pattern!r}")
                if pname in seen:
                    raise ValueError(f"duplicate parameter {pname!r} in pattern {self.pattern!r}")
                seen.add(pname)
                self.parts.append((conv, pname))
            else:
                self.parts.append(("", seg))

    @property
    def static_count(self) -> int:
        """Number of literal segments; more literal segments means a more specific route."""
        return sum(1 for conv, _ in self.parts if conv == "")

    def match(self, segments: list[str]) -> dict[str, Any] | None:
        """Return the converted parameters if ``segments`` fit this pattern, else ``None``."""
        if len(segments) != len(self.parts):
            return None
        params: dict[str, Any] = {}
        for (conv, text), seg in zip(self.parts, segments):
            if conv == "":
                if seg != text:
                    return None
                continue
            try:
                params[text] = CONVERTERS[conv](seg)
            except ValueError:
                return None
        return params

    def build(self, params: dict[str, Any]) -> str:
        """Fill the pattern with ``params`` and return the path (segments percent-encoded)."""
        out: list[str] = []
        for conv, text in self.parts:
            if conv == "":
                out.append(percent_encode(text))
                continue
            if text not in params:
                raise KeyError(f"missing parameter {text!r} for route {self.pattern!r}")
            out.append(percent_encode(str(params[text])))
        return "/" + "/".join(out)


class Router:
    """A table of routes; ``resolve`` picks the most specific route for a method and path."""

    def __init__(self) -> None:
        self.routes: list[Route] = []

    def add(self, pattern: str, handler: Any, methods: tuple[str, ...] = ("GET",), name: str | None = None) -> Route:
        """Register ``handler`` for ``pattern``; names must be unique."""
        if name is not None and any(r.name == name for r in self.routes):
            raise ValueError(f"route name {name!r} already registered")
        route = Route(pattern, handler, methods, name)
        self.routes.append(route)
        return route

    def resolve(self, method: str, path: str) -> tuple[Any, dict[str, Any]]:
        """Return ``(handler, params)`` for the request.

        Among matching routes the one with most literal segments wins (ties: first registered).
        ``HEAD`` falls back to ``GET`` routes. Raises ``MethodNotAllowed`` if only the method is
        wrong and ``NotFound`` if nothing matches the path.
        """
        method = method.upper()
        segments = split_path(path)
        best: tuple[Route, dict[str, Any]] | None = None
        allowed: set[str] = set()
        for route in self.routes:
            params = route.match(segments)
            if params is None:
                continue
            allowed.update(route.methods)
            ok = method in route.methods or (method == "HEAD" and "GET" in route.methods)
            if not ok:
                continue
            if best is None or route.static_count > best[0].static_count:
                best = (route, params)
        if best is not None:
            return best[0].handler, best[1]
        if allowed:
            raise MethodNotAllowed(path, sorted(allowed))
        raise NotFound(path)

    def url_for(self, name: str, query: dict[str, object] | None = None, **params: Any) -> str:
        """Build the path of the route called ``name``, optionally with a query string."""
        from .querystring import build_query

        for route in self.routes:
            if route.name == name:
                path = route.build(params)
                if query:
                    qs = build_query(query)
                    if qs:
                        path += "?" + qs
                return path
        raise KeyError(f"no route named {name!r}")
