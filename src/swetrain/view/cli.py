"""``swetrain view RUN_DIR [--out FILE.html] [--serve --port N] [--compare RUN_B]``."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Optional

import typer

DEFAULT_MAX_MB = 200.0


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {' '.join(str(message).split())}", err=True)
    raise typer.Exit(code)


def _store_bytes(path: Path) -> int:
    """Uncompressed bytes of every trajectory part under ``path`` (footer metadata only)."""
    from swetrain.view.load import open_run

    import pyarrow.parquet as pq

    total = 0
    for src in open_run(path).sources:
        for part in src.parts:
            try:
                md = pq.ParquetFile(part.path).metadata
                total += sum(md.row_group(g).total_byte_size for g in range(md.num_row_groups))
            except Exception:  # noqa: BLE001 - the build notes it
                continue
    return total


def register(app: typer.Typer) -> None:
    @app.command("view")
    def view(
        run_dir: Path = typer.Argument(..., help="a run directory: the --out of rollout, eval, train, quickstart or experts"),
        out: Optional[Path] = typer.Option(None, "--out", help="HTML file to write (default RUN_DIR/view.html)"),
        serve: bool = typer.Option(False, "--serve", help="serve the page on 127.0.0.1 instead (pages through the Parquet parts)"),
        port: int = typer.Option(8765, "--port", help="--serve: the port (0: any free one)"),
        compare: Optional[Path] = typer.Option(None, "--compare", help="a second run shown side by side (same task, chain, attempt, seed)"),
        tokenizer: Optional[str] = typer.Option(None, "--tokenizer", help="a tokenizer folder (default: the run's own, when found)"),
        max_tokens: int = typer.Option(24_000, "--max-tokens", help="tokens of one episode put in the page (head and tail beyond)"),
        max_mb: float = typer.Option(DEFAULT_MAX_MB, "--max-mb", help="refuse to write a file above this size (use --serve)"),
        compress: bool = typer.Option(True, "--compress/--no-compress", help="gzip the data inside the page"),
    ) -> None:
        """A run viewer: summary, task table, episodes and the tokens the trainer used (offline HTML)."""
        try:
            _view(run_dir, out, serve, port, compare, tokenizer, max_tokens, max_mb, compress)
        except typer.Exit:
            raise
        except Exception as exc:  # noqa: BLE001 - bad input is one line, never a traceback
            from swetrain.view.load import ViewError

            if os.environ.get("SWETRAIN_DEBUG"):
                raise
            if isinstance(exc, (ViewError, OSError)):
                _fail(str(exc))
            _fail(f"could not render {run_dir}: {type(exc).__name__}: {exc} (SWETRAIN_DEBUG=1 shows the traceback)", 1)


def _view(run_dir: Path, out: Optional[Path], serve: bool, port: int, compare: Optional[Path], tokenizer: Optional[str],
          max_tokens: int, max_mb: float, compress: bool) -> None:
    from swetrain.view.build import build_run, page_data
    from swetrain.view.load import ViewError

    if max_tokens < 16:
        raise ViewError(f"--max-tokens: must be at least 16 (got {max_tokens})")
    if not 0 <= port <= 65535:
        raise ViewError(f"--port: must be in 0..65535 (got {port})")
    if serve and out is not None:
        raise ViewError("--out and --serve: choose one (a file, or a server)")
    started = time.monotonic()
    runs = [run_dir] + ([compare] if compare is not None else [])
    if serve:
        from swetrain.view.server import serve as serve_views

        views = [build_run(p, run_no=i, tokenizer=tokenizer, max_tokens=max_tokens, details=False) for i, p in enumerate(runs)]

        def ready(server) -> None:
            n = sum(len(v.index) for v in views)
            typer.echo(f"serving {run_dir} ({n} episodes) on {server.url}  (Ctrl-C stops)")
            sys.stdout.flush()

        try:
            serve_views(views, port, max_tokens, ready)
        except OSError as exc:
            raise ViewError(f"--port {port}: cannot listen on 127.0.0.1:{port} ({exc.strerror or exc})") from None
        return
    for p in runs:  # refuse, before reading them, runs whose rows alone are far beyond one file
        raw = _store_bytes(p)
        if raw > 4 * max_mb * 1e6:
            raise ViewError(f"{p}: {raw / 1e6:.0f} MB of trajectories is too large for one file (--max-mb {max_mb:g}); "
                            "use --serve, which pages through the Parquet parts")
    views = [build_run(p, run_no=i, tokenizer=tokenizer, max_tokens=max_tokens) for i, p in enumerate(runs)]
    from swetrain.view.html import render_page

    page = render_page(page_data(views), title=f"swetrain view: {Path(run_dir).resolve().name}", compress=compress)
    size = len(page.encode("utf-8"))
    if size > max_mb * 1e6:
        raise ViewError(f"the page would be {size / 1e6:.1f} MB, over --max-mb {max_mb:g}: use --serve, or raise --max-mb")
    if out is None:
        out = Path(run_dir) / ("view.html" if compare is None else f"view-vs-{Path(compare).resolve().name}.html")
    out = Path(out)
    if out.is_dir():
        raise ViewError(f"--out {out}: is a directory (give a file name, e.g. {out / 'view.html'})")
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ViewError(f"--out {out}: cannot write ({exc.strerror or exc})") from None
    n = sum(len(v.index) for v in views)
    notes = sum(len(v.run.notes) for v in views)
    typer.echo(f"wrote {out} ({size / 1e6:.2f} MB, {n} episodes, {time.monotonic() - started:.1f} s)"
               + (f"; {notes} note(s) shown at the top of the page" if notes else ""))
