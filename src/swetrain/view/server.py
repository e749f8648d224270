"""``swetrain view --serve``: the same page, served from 127.0.0.1, for runs too big for one file.

The server holds only the task table (the light columns of every part); an episode is read when
the page asks for it (``/api/episode?key=RUN:STORE:PART:ROW``): its part is read, the row taken, and
the last few parts read stay cached (``build.load_episode``). It binds to the loopback interface only and serves nothing but
the page and these two JSON routes.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from swetrain.view.build import DEFAULT_MAX_TOKENS, RunView, load_episode, page_data
from swetrain.view.html import compact_json, render_page

HOST = "127.0.0.1"


class ViewServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, views: list[RunView], port: int = 0, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        self.views = views
        self.max_tokens = max_tokens
        self.page = render_page(None, title=f"swetrain view: {views[0].run.root.name}").encode("utf-8")
        self.data = compact_json(page_data(views, mode="serve")).encode("utf-8")
        self.lock = threading.Lock()
        super().__init__((HOST, port), _Handler)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/"


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        return

    def _send(self, code: int, body: bytes, ctype: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlparse(self.path)
        if url.path in ("/", "/index.html"):
            self._send(200, self.server.page, "text/html; charset=utf-8")
        elif url.path == "/api/data":
            self._send(200, self.server.data, "application/json")
        elif url.path == "/api/episode":
            key = (parse_qs(url.query).get("key") or [""])[0]
            try:
                run_no = int(key.split(":")[0])
                view = self.server.views[run_no]
            except (ValueError, IndexError):
                self._send(400, b"bad episode key", "text/plain")
                return
            with self.server.lock:  # pyarrow reads and the vocabulary cache, one at a time
                ep = load_episode(view, key, self.server.max_tokens)
                notes = list(view.run.notes)
            if ep is None:
                self._send(404, f"no episode {key} (its part may be unreadable: {notes[-1] if notes else ''})".encode(), "text/plain")
                return
            self._send(200, compact_json(ep).encode("utf-8"), "application/json")
        else:
            self._send(404, b"not found", "text/plain")


def serve(views: list[RunView], port: int, max_tokens: int = DEFAULT_MAX_TOKENS, ready: Any = None) -> None:
    """Serve until interrupted; ``ready(server)`` is called once listening (prints the address)."""
    server = ViewServer(views, port, max_tokens)
    try:
        if ready is not None:
            ready(server)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
