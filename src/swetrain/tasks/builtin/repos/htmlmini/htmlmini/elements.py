"""Building HTML elements from Python values."""
from __future__ import annotations

from typing import Any, Iterable

from .escape import escape

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class Markup(str):
    """A string that is already safe HTML and must not be escaped again."""


def class_names(*args: Any) -> str:
    """Join CSS classes: strings are split on whitespace, dicts contribute keys with truthy values,
    lists are flattened; duplicates are removed keeping first occurrence."""
    seen: list[str] = []

    def add(item: Any) -> None:
        if not item:
            return
        if isinstance(item, str):
            for cls in item.split():
                if cls not in seen:
                    seen.append(cls)
        elif isinstance(item, dict):
            for key, on in item.items():
                if on:
                    add(key)
        elif isinstance(item, (list, tuple)):
            for sub in item:
                add(sub)
        else:
            add(str(item))

    for arg in args:
        add(arg)
    return " ".join(seen)


def style_string(styles: dict[str, Any]) -> str:
    """``{"font_size": "12px", "color": None}`` -> ``"font-size: 12px"``; ``None`` values are skipped,
    underscores become dashes, numbers other than 0 get ``px``."""
    parts = []
    for key, value in styles.items():
        if value is None:
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0:
            value = f"{value}px"
        parts.append(f"{key.replace('_', '-')}: {value}")
    return "; ".join(parts)


def render_attrs(attrs: dict[str, Any]) -> str:
    """Render attributes sorted by name, each preceded by a space.

    ``True`` renders the bare name, ``False``/``None`` omit the attribute, ``class_`` maps to
    ``class`` (passing through ``class_names``), a dict ``style`` through ``style_string``.
    """
    rendered = []
    for raw_name in sorted(attrs):
        value = attrs[raw_name]
        name = raw_name.rstrip("_").replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            rendered.append(f" {name}")
            continue
        if name == "class":
            value = class_names(value)
            if not value:
                continue
        elif name == "style" and isinstance(value, dict):
            value = style_string(value)
        rendered.append(f' {name}="{escape(value)}"')
    return "".join(rendered)


def element(tag: str, children: Iterable[Any] | Any = (), **attrs: Any) -> Markup:
    """Render ``<tag attrs>children</tag>``; string children are escaped unless ``Markup``;
    void tags (``br``, ``img`` ...) must have no children and render as ``<tag>``."""
    if not tag.isalnum():
        raise ValueError(f"invalid tag name {tag!r}")
    tag = tag.lower()
    if isinstance(children, (str, Markup)) or not isinstance(children, Iterable):
        children = [children]
    kids = [c for c in children if c is not None]
    head = f"<{tag}{render_attrs(attrs)}>"
    if tag in VOID:
        if kids:
            raise ValueError(f"<{tag}> is a void element and cannot have children")
        return Markup(head)
    body = "".join(c if isinstance(c, Markup) else escape(c) for c in kids)
    return Markup(f"{head}{body}</{tag}>")
