"""HTTP header and status helpers."""
from __future__ import annotations

_REASONS = {
    200: "OK", 201: "Created", 204: "No Content", 301: "Moved Permanently", 302: "Found",
    304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
    404: "Not Found", 405: "Method Not Allowed", 409: "Conflict", 429: "Too Many Requests",
    500: "Internal Server Error", 503: "Service Unavailable",
}


def reason_phrase(code: int) -> str:
    """Standard reason phrase for ``code``; unknown codes get the phrase of their class."""
    if code in _REASONS:
        return _REASONS[code]
    return {1: "Informational", 2: "Success", 3: "Redirection", 4: "Client Error", 5: "Server Error"}.get(
        status_class(code), "Unknown"
    )


def status_class(code: int) -> int:
    """The hundreds digit of a status code (1..5); raises ``ValueError`` outside 100..599."""
    if code < 100 or code > 599:
        raise ValueError(f"status code out of range: {code}")
    return code // 100


def parse_content_type(value: str) -> tuple[str, dict[str, str]]:
    """Split ``text/html; charset=UTF-8`` into ``("text/html", {"charset": "UTF-8"})``.

    The media type and parameter names are lower-cased; quoted values lose their quotes.
    """
    pieces = [p.strip() for p in value.split(";")]
    media = pieces[0].lower()
    params: dict[str, str] = {}
    for piece in pieces[1:]:
        if "=" not in piece:
            continue
        k, v = piece.split("=", 1)
        v = v.strip()
        if len(v) >= 2 and v[0] == '"' and v[-1] == '"':
            v = v[1:-1]
        params[k.strip().lower()] = v
    return media, params


def parse_accept(value: str) -> list[tuple[str, float]]:
    """Parse an Accept header into ``(media_type, q)`` pairs sorted by preference.

    Higher ``q`` first; on equal ``q`` more specific types (fewer ``*``) first, then header order.
    Entries with ``q=0`` or an unparsable ``q`` are dropped; ``q`` is clamped to at most 1.
    """
    entries: list[tuple[float, int, int, str]] = []
    for index, item in enumerate(value.split(",")):
        item = item.strip()
        if not item:
            continue
        media, params = parse_content_type(item)
        q = 1.0
        if "q" in params:
            try:
                q = float(params["q"])
            except ValueError:
                continue
        if q <= 0:
            continue
        q = min(q, 1.0)
        wildcards = media.count("*")
        entries.append((-q, wildcards, index, media))
    entries.sort()
    return [(media, -neg_q) for neg_q, _, _, media in entries]
