"""A line-oriented command log: ``SET key ttl value`` / ``DEL key``, replayable into a store."""
from __future__ import annotations

from typing import Iterable

from .store import Store


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(" ", "\\s").replace("\n", "\\n")


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append({"s": " ", "n": "\n", "\\": "\\"}.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def encode_entry(op: str, key: str, value: str | None = None, ttl: float | None = None) -> str:
    """Encode one command as a single line; ``op`` is ``SET`` or ``DEL`` (case-insensitive)."""
    op = op.upper()
    if op == "SET":
        if value is None:
            raise ValueError("SET needs a value")
        ttl_text = "-" if ttl is None else repr(float(ttl))
        return f"SET {_escape(key)} {ttl_text} {_escape(value)}"
    if op == "DEL":
        return f"DEL {_escape(key)}"
    raise ValueError(f"unknown op {op!r}")


def decode_entry(line: str) -> tuple[str, str, str | None, float | None]:
    """Inverse of ``encode_entry``: return ``(op, key, value, ttl)``; raises ``ValueError`` on bad lines."""
    parts = line.rstrip("\n").split(" ")
    if not parts or parts[0] not in ("SET", "DEL"):
        raise ValueError(f"bad log line: {line!r}")
    if parts[0] == "DEL":
        if len(parts) != 2:
            raise ValueError(f"bad DEL line: {line!r}")
        return "DEL", _unescape(parts[1]), None, None
    if len(parts) != 4:
        raise ValueError(f"bad SET line: {line!r}")
    ttl = None if parts[2] == "-" else float(parts[2])
    return "SET", _unescape(parts[1]), _unescape(parts[3]), ttl


def replay(lines: Iterable[str], store: Store | None = None) -> Store:
    """Apply log lines in order to ``store`` (a new one by default); blank lines and ``#`` comments are skipped."""
    target = store if store is not None else Store()
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        op, key, value, ttl = decode_entry(line)
        if op == "SET":
            target.set(key, value, ttl=ttl)
        else:
            target.delete(key)
    return target
