"""routekit: a small URL router, query-string codec and HTTP header helpers."""
from .querystring import build_query, parse_query, percent_decode, percent_encode
from .router import MethodNotAllowed, NotFound, Route, Router, split_path
from .headers import parse_accept, parse_content_type, reason_phrase, status_class

__all__ = [
    "build_query", "parse_query", "percent_decode", "percent_encode",
    "MethodNotAllowed", "NotFound", "Route", "Router", "split_path",
    "parse_accept", "parse_content_type", "reason_phrase", "status_class",
]
