"""The page: one HTML document with the stylesheet, the script and (for a file) the data inline.

The data is JSON, gzip-compressed and base64-encoded into ``<script id="swetrain-data"
type="application/octet-stream" data-encoding="gzip-base64">`` (the prompt of every episode repeats,
so it compresses ~10x); the page decompresses it with the browser's own ``DecompressionStream``.
``compress=False`` embeds plain JSON instead. Nothing is fetched from the network.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import math
from typing import Any

from swetrain.view.assets_css import CSS
from swetrain.view.assets_js import JS

_TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'">
<title>{title}</title>
<style>{css}</style>
</head><body>
<header><h1>swetrain view</h1><span class="path" id="run-path"></span><span class="path" id="generated"></span></header>
<div class="notes" id="notes"></div>
<nav><button data-tab="summary">Summary</button><button data-tab="tasks">Tasks</button><button data-tab="episode">Episode</button></nav>
<main>
<section class="tab" id="tab-summary"></section>
<section class="tab" id="tab-tasks"><div class="filters" id="filters"></div><div class="table-wrap"><table id="task-table"></table></div></section>
<section class="tab" id="tab-episode"><div id="episode"><div class="empty">select an episode in the Tasks tab</div></div></section>
</main>
{data}
<noscript>This page needs JavaScript (it runs offline: nothing is fetched).</noscript>
<script>{js}</script>
</body></html>
"""


def _finite(obj: Any) -> Any:
    """``obj`` with NaN/inf floats as None (JSON has no NaN)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def compact_json(data: Any) -> str:
    """``data`` as compact JSON text (no ASCII escaping; NaN/inf become null, other
    objects as ``str``): what the page embeds and the server sends."""
    try:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    except ValueError:  # a NaN somewhere: clean the whole object once
        data = _finite(data)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)


def render_page(data: dict[str, Any] | None, *, title: str = "swetrain view", compress: bool = True) -> str:
    """The page's HTML; ``data`` None: a page that fetches ``/api/data`` (``--serve``)."""
    if data is None:
        block = ""
    elif compress:
        raw = gzip.compress(compact_json(data).encode("utf-8"), compresslevel=6, mtime=0)
        block = ('<script id="swetrain-data" type="application/octet-stream" data-encoding="gzip-base64">'
                 + base64.b64encode(raw).decode("ascii") + "</script>")
    else:
        text = compact_json(data).replace("</", "<\\/").replace("<!--", "<\\u0021--")
        block = f'<script id="swetrain-data" type="application/json" data-encoding="json">{text}</script>'
    return _TEMPLATE.format(title=html.escape(title), css=CSS, js=JS, data=block)
