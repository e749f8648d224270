"""Escaping and unescaping of HTML text."""
from __future__ import annotations

_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'", "nbsp": "\u00a0", "copy": "\u00a9"}


def escape(text: object, quote: bool = True) -> str:
    """Replace ``& < >`` (and ``" '`` when ``quote``) by entities; ``&`` is replaced first."""
    s = str(text)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if quote:
        s = s.replace('"', "&quot;").replace("'", "&#x27;")
    return s


def unescape(text: str) -> str:
    """Decode named (``&amp;``), decimal (``&#65;``) and hex (``&#x41;``) entities.

    Unknown or malformed entities, and code points above U+10FFFF, are left unchanged.
    """
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch != "&":
            out.append(ch)
            i += 1
            continue
        end = text.find(";", i + 1)
        if end == -1 or end - i > 10:
            out.append(ch)
            i += 1
            continue
        body = text[i + 1:end]
        decoded = _decode_entity(body)
        if decoded is None:
            out.append(ch)
            i += 1
        else:
            out.append(decoded)
            i = end + 1
    return "".join(out)


def _decode_entity(body: str) -> str | None:
    if body.startswith("#x") or body.startswith("#X"):
        digits, base = body[2:], 16
    elif body.startswith("#"):
        digits, base = body[1:], 10
    else:
        return _NAMED.get(body)
    if not digits:
        return None
    try:
        code = int(digits, base)
    except ValueError:
        return None
    if code > 0x10FFFF:
        return None
    return chr(code)


def strip_tags(html: str) -> str:
    """Remove ``<...>`` tags, keep text, unescape entities and collapse whitespace runs to one space."""
    out: list[str] = []
    depth = 0
    for ch in html:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth > 0:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return " ".join(unescape("".join(out)).split())
