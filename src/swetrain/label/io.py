"""Atomic file writes for labels files, the corpus and reports: all or nothing."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to a temporary file next to ``path`` and rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    finally:
        if tmp.exists():
            tmp.unlink()


def jsonl_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """``(line number, row, None)`` for each JSON object line of a JSONL file, ``(line number, None,
    problem)`` for a line that is not one (the problem names the file and line); blank lines skipped."""
    path = Path(path)
    with path.open(encoding="utf-8") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as exc:
                yield line_no, None, f"{path}:{line_no}: invalid JSON: {exc.msg} (column {exc.colno})"
                continue
            if not isinstance(row, dict):
                yield line_no, None, f"{path}:{line_no}: expected a JSON object, got {type(row).__name__}"
                continue
            yield line_no, row, None
