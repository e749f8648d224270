"""Append-only trajectory store: Parquet part files in ``RUN_DIR/trajectories/``.

Each :meth:`TrajectoryStore.append` writes one part file ``part-NNNNNNNN.parquet`` (one row per
executed attempt) to a temporary name and renames it into place, so a reader never sees a partial
part and a killed run loses at most the trajectories not yet appended. Leftover temporary files
of a crashed writer are ignored (and removed when a writer reopens the store).

Rows are ordered by part number, then by position inside the part; ``read(offset)`` returns the
rows after the first ``offset`` ones, so a trainer that remembers how many rows it consumed can
resume without duplicates. The files are plain Parquet: ``pandas.read_parquet(RUN_DIR /
"trajectories")`` or duckdb read them too.

Faults: a part that cannot be read (truncated, overwritten, a data page failing its checksum) raises
:class:`StoreError` naming the file, its size and the problem; :meth:`TrajectoryStore.drop_unreadable`
moves such parts aside (``.part-N.parquet.<id>.corrupt``) so a resumed rollout re-runs their chains.
A write that fails because the disk is full (ENOSPC/EDQUOT) or a file-size limit was hit (EFBIG)
raises :class:`DiskFullError` naming the part; nothing partial is left behind.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import threading
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from swetrain.agent.trajectory import Trajectory

_PART = re.compile(r"^part-(\d{8})\.parquet$")

# Column types fixed up front so every part has the same schema (pyarrow would otherwise infer
# null types from empty lists/None and give parts that do not concatenate).
def _schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("instance_id", pa.string()),
            ("chain", pa.int32()),
            ("attempt", pa.int32()),
            ("active", pa.bool_()),
            ("context_variant", pa.string()),
            ("context", pa.string()),
            ("messages", pa.string()),
            ("token_ids", pa.list_(pa.int32())),
            ("assistant_mask", pa.list_(pa.int8())),
            ("segment_ids", pa.list_(pa.int32())),
            ("behavior_logprobs", pa.list_(pa.float64())),
            ("invalid", pa.list_(pa.bool_())),
            ("invalid_reasons", pa.string()),
            ("patch", pa.string()),
            ("verdict", pa.string()),
            ("resolved", pa.bool_()),
            ("reward", pa.float32()),
            ("input_tokens", pa.int64()),
            ("output_tokens", pa.int64()),
            ("num_turns", pa.int32()),
            ("stop_reason", pa.string()),
            ("timings", pa.string()),
            ("policy_version", pa.int64()),
            ("prompt_len", pa.int32()),
            ("seed", pa.int64()),
        ]
    )


class StoreError(RuntimeError):
    """A part file could not be written or read; the message names the file."""


class DiskFullError(OSError):
    """A write failed for lack of space (ENOSPC, EDQUOT) or a file-size limit (EFBIG).

    Raised as ``DiskFullError(errno, message, path)``; ``str()`` is the message, which names the
    path and says "disk full" (or which limit was hit).
    """

    def __str__(self) -> str:
        return str(self.strerror)


_SPACE_ERRNOS = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk quota exceeded", errno.EFBIG: "file size limit reached"}
_SPACE_TEXTS = (
    ("no space left on device", errno.ENOSPC),
    ("os error 28", errno.ENOSPC),  # Rust writers (safetensors)
    ("disk quota exceeded", errno.EDQUOT),
    ("file too large", errno.EFBIG),
)
LOW_SPACE_BYTES = 1 << 20  # below this much free space a failed write is taken as "disk full"


def free_bytes(path: str | os.PathLike) -> int | None:
    """Bytes available to this user on the filesystem holding ``path`` (its nearest existing parent)."""
    p = Path(path)
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return shutil.disk_usage(p).free
    except OSError:
        return None


def space_errno(exc: BaseException, path: str | os.PathLike | None = None) -> int | None:
    """ENOSPC / EDQUOT / EFBIG when ``exc`` (or an exception it was raised from) is a write that
    ran out of space, else None.

    Errors carrying no errno (pyarrow, safetensors and torch.save wrap the OS error in their own
    text) are recognised by that text, or -- when ``path`` is given -- by the filesystem holding it
    having less than :data:`LOW_SPACE_BYTES` left right after the failure (torch.save says only
    "unexpected pos").
    """
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in _SPACE_ERRNOS:
            return e.errno
        text = str(e).lower()
        for needle, code in _SPACE_TEXTS:
            if needle in text:
                return code
        e = e.__cause__ or e.__context__
    if path is not None:
        free = free_bytes(path)
        if free is not None and free < LOW_SPACE_BYTES:
            return errno.ENOSPC
    return None


def disk_full_error(exc: BaseException, what: str, path: str | os.PathLike) -> DiskFullError | None:
    """A :class:`DiskFullError` "<reason> while writing <what> <path> (N bytes free): <exc>" when
    ``exc`` is a space failure (see :func:`space_errno`), else None."""
    code = space_errno(exc, path)
    if code is None:
        return None
    free = free_bytes(path)
    where = f" ({free} bytes free)" if free is not None else ""
    detail = " ".join(str(exc).split()) or type(exc).__name__
    return DiskFullError(code, f"{_SPACE_ERRNOS[code]} while writing {what} {path}{where}: {detail}", str(path))


def _unreadable(part: Path, exc: BaseException) -> StoreError:
    """A StoreError naming ``part``, its size and what pyarrow found wrong with it."""
    try:
        size = f"{part.stat().st_size} bytes"
    except OSError:
        size = "size unknown"
    detail = " ".join(str(exc).split()) or type(exc).__name__
    return StoreError(
        f"trajectory part {part} is unreadable (corrupt or truncated, {size}): {detail}; "
        "a resumed run drops it (swetrain rollout --resume; swetrain train --resume if it lies after the checkpoint)"
    )


class TrajectoryStore:
    """Append-only Parquet parts under ``run_dir/trajectories`` (see module docstring)."""

    def __init__(self, run_dir: str | os.PathLike) -> None:
        self.run_dir = Path(run_dir)
        self.dir = self.run_dir / "trajectories"
        self._lock = threading.Lock()
        self._next: int | None = None

    def check_run_dir(self) -> None:
        """Raise :class:`StoreError` naming the run directory unless rows can be stored in it."""
        problem = None
        if self.run_dir.exists() and not self.run_dir.is_dir():
            problem = "exists and is not a directory"
        elif self.dir.exists() and not self.dir.is_dir():
            problem = f"its {self.dir.name!r} exists and is not a directory"
        else:
            try:
                self.dir.mkdir(parents=True, exist_ok=True)
                probe = self.dir / f".probe-{os.getpid()}-{threading.get_ident()}"
                probe.write_bytes(b"")
                probe.unlink()
            except OSError as exc:
                problem = f"cannot be written ({exc.strerror or exc})"
        if problem:
            raise StoreError(f"run directory {self.run_dir}: {problem}")

    # ------------------------------------------------------------------ writing
    def _parts(self) -> list[Path]:
        if not self.dir.is_dir():
            return []
        parts = [(int(m.group(1)), p) for p in self.dir.iterdir() if (m := _PART.match(p.name))]
        return [p for _, p in sorted(parts)]

    def _open_for_writing(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        for stale in self.dir.glob(".part-*.tmp"):  # half-written parts of a killed writer
            stale.unlink(missing_ok=True)
        parts = self._parts()
        self._next = int(_PART.match(parts[-1].name).group(1)) + 1 if parts else 0

    def append(self, trajectories: Sequence[Trajectory] | Iterable[Trajectory]) -> Path | None:
        """Write one part holding ``trajectories`` atomically; return its path (None if empty)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        trajs = list(trajectories)
        if not trajs:
            return None
        rows = []
        for t in trajs:
            t.check()
            rows.append(t.to_row())
        table = pa.Table.from_pylist(rows, schema=_schema())
        with self._lock:
            if self._next is None:
                self._open_for_writing()
            tmp = self.dir / f".part-{self._next:08d}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
            try:
                pq.write_table(table, tmp, write_page_checksum=True)
                with open(tmp, "rb") as fh:
                    os.fsync(fh.fileno())
                final = self._publish(tmp)
            except Exception as exc:
                tmp.unlink(missing_ok=True)
                target = self.dir / f"part-{self._next:08d}.parquet"
                full = disk_full_error(exc, "trajectory part", target)
                if full is not None:
                    raise full from exc
                raise StoreError(f"could not write trajectory part {target}: {exc}") from exc
        return final

    def _publish(self, tmp: Path) -> Path:
        """Give the written ``tmp`` the next free part number, never replacing an existing part.

        A hard link fails when the name exists, so another writer on the same folder (another
        process or store object) that took the number makes this one move on to the next.
        """
        while True:
            final = self.dir / f"part-{self._next:08d}.parquet"
            self._next += 1
            try:
                os.link(tmp, final)
            except FileExistsError:
                continue
            except OSError:  # a filesystem without hard links: check, then rename
                if final.exists():
                    continue
                os.replace(tmp, final)
                return final
            tmp.unlink()
            return final

    # ------------------------------------------------------------------ reading
    def read_table(self, offset: int = 0, columns: Sequence[str] | None = None) -> Any:
        """A pyarrow Table of every row after the first ``offset`` (parts in order).

        Parts that lie wholly before ``offset`` are skipped by their footer's row count, so a
        trainer polling with a growing offset does not re-read what it consumed. ``columns``
        limits the columns read.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        schema = _schema()
        if columns is not None:
            unknown = [c for c in columns if c not in schema.names]
            if unknown:
                raise ValueError(f"columns: unknown trajectory column(s) {unknown}; known: {schema.names}")
            schema = pa.schema([schema.field(c) for c in columns])
        tables = []
        skip = offset
        for part in self._parts():
            try:
                if skip:
                    rows = pq.ParquetFile(part).metadata.num_rows
                    if rows <= skip:
                        skip -= rows
                        continue
                tables.append(pq.read_table(part, schema=_schema(), columns=columns, page_checksum_verification=True))
            except Exception as exc:  # noqa: BLE001
                raise _unreadable(part, exc) from exc
        table = pa.concat_tables(tables) if tables else schema.empty_table()
        return table.slice(skip) if skip else table

    def read_rows(self, offset: int = 0) -> list[dict[str, Any]]:
        return self.read_table(offset).to_pylist()

    def read_all(self, offset: int = 0) -> list[Trajectory]:
        """Every stored trajectory after the first ``offset`` rows."""
        return [Trajectory.from_row(r) for r in self.read_rows(offset)]

    def read(self, offset: int = 0) -> tuple[list[Trajectory], int]:
        """(trajectories after ``offset``, the new offset to resume from)."""
        trajs = self.read_all(offset)
        return trajs, offset + len(trajs)

    def count(self) -> int:
        import pyarrow.parquet as pq

        total = 0
        for part in self._parts():
            try:
                total += pq.ParquetFile(part).metadata.num_rows
            except Exception as exc:  # noqa: BLE001
                raise _unreadable(part, exc) from exc
        return total

    def check(self) -> list[tuple[Path, str]]:
        """Every part that cannot be read in full (footer, schema, data pages and their
        checksums), with the problem; reads one part at a time."""
        import pyarrow.parquet as pq

        bad = []
        for part in self._parts():
            try:
                table = pq.read_table(part, schema=_schema(), page_checksum_verification=True)
                if table.num_rows == 0:
                    raise ValueError("the part holds no rows (parts are never written empty)")
            except Exception as exc:  # noqa: BLE001
                bad.append((part, str(_unreadable(part, exc))))
        return bad

    def drop_unreadable(self) -> list[tuple[Path, str]]:
        """Move every unreadable part (see :meth:`check`) aside to a hidden
        ``.part-N.parquet.<id>.corrupt`` file, out of every reader's way; return (part, problem).

        Only for a store no other process is writing. A resumed rollout calls it, so the chains of
        a dropped part are simply not "done" and run again.
        """
        bad = self.check()
        with self._lock:
            for part, problem in bad:
                os.replace(part, part.with_name(f".{part.name}.{uuid.uuid4().hex[:8]}.corrupt"))
            if bad:
                self._next = None  # re-number from what is left
        return bad

    def to_pandas(self, offset: int = 0) -> Any:
        return self.read_table(offset).to_pandas()

    def done_chains(self) -> set[tuple[str, int]]:
        """(instance_id, chain) pairs with stored rows (a resumed rollout skips them)."""
        table = self.read_table(columns=["instance_id", "chain"])
        if table.num_rows == 0:
            return set()
        cols = table.select(["instance_id", "chain"]).to_pydict()
        return set(zip(cols["instance_id"], cols["chain"]))


def write_json_atomic(path: str | os.PathLike, obj: Any) -> Path:
    """Write JSON to ``path`` via a temporary file and rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
