"""Percent-encoding and query-string parsing (application/x-www-form-urlencoded)."""
from __future__ import annotations

_UNRESERVED = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = "0123456789ABCDEF"


def percent_encode(text: str, plus_for_space: bool = False) -> str:
    """Encode ``text`` as UTF-8 and percent-escape every byte outside the unreserved set.

    With ``plus_for_space`` a space becomes ``+`` instead of ``%20``. Hex digits are upper case.
    """
    out: list[str] = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in _UNRESERVED:
            out.append(ch)
        elif byte == 0x20 and plus_for_space:
            out.append("+")
        else:
            out.append("%" + _HEX[byte >> 4] + _HEX[byte & 0x0F])
    return "".join(out)


def percent_decode(text: str, plus_as_space: bool = False) -> str:
    """Decode ``%XX`` escapes (and ``+`` when ``plus_as_space``) back into a UTF-8 string.

    A ``%`` that is not followed by two hex digits is kept literally.
    """
    data = bytearray()
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "%" and i + 2 < n and _is_hex(text[i + 1:i + 3]):
            data.append(int(text[i + 1:i + 3], 16))
            i += 3
            continue
        if ch == "+" and plus_as_space:
            data.append(0x20)
        else:
            data.extend(ch.encode("utf-8"))
        i += 1
    return data.decode("utf-8", errors="replace")


def _is_hex(pair: str) -> bool:
    return len(pair) == 2 and all(c in "0123456789abcdefABCDEF" for c in pair)


def parse_query(query: str, keep_blank: bool = False) -> dict[str, list[str]]:
    """Parse ``a=1&b=2&a=3`` into ``{"a": ["1", "3"], "b": ["2"]}``.

    A leading ``?`` is ignored, ``+`` means space, pairs without ``=`` have the value ``""``.
    Pairs with an empty value are dropped unless ``keep_blank`` is true; empty keys are always dropped.
    """
    if query.startswith("?"):
        query = query[1:]
    result: dict[str, list[str]] = {}
    if not query:
        return result
    for part in query.split("&"):
        if not part:
            continue
        if "=" in part:
            raw_key, raw_value = part.split("=", 1)
        else:
            raw_key, raw_value = part, ""
        key = percent_decode(raw_key, plus_as_space=True)
        value = percent_decode(raw_value, plus_as_space=True)
        if not key:
            continue
        if value == "" and not keep_blank:
            continue
        result.setdefault(key, []).append(value)
    return result


def build_query(params: dict[str, object]) -> str:
    """Build a query string from a mapping; list/tuple values repeat the key, ``None`` is skipped.

    Keys are emitted in sorted order so the output is deterministic; booleans become ``true``/``false``.
    """
    parts: list[str] = []
    for key in sorted(params):
        value = params[key]
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if item is None:
                continue
            if isinstance(item, bool):
                text = "true" if item else "false"
            else:
                text = str(item)
            parts.append(percent_encode(str(key), True) + "=" + percent_encode(text, True))
    return "&".join(parts)
