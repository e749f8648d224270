"""Exact, fast restoration of a folder to a pristine copy of it.

A :class:`TreeState` remembers, for every entry of a working tree, the stat facts that change
whenever the entry is touched: inode and ctime (the kernel bumps ctime on every write, chmod,
chown, rename; user space cannot set it back), plus mode, size and mtime. Restoring compares the
tree with that record and repairs only the differences from a pristine copy: extra entries are
deleted, changed or missing ones are copied back with their mode and mtime (``shutil.copy2``),
directory modes are set back.

Which entries to look at comes from an inotify watch on every original directory when Linux
allows it (then a reset costs O(changes)); otherwise, or after a queue overflow or a moved/deleted
original directory, from a full scan (O(files), still no copying).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import shutil
import stat
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

Entry = tuple[int, int, int, int, int]  # (mode, size, mtime_ns, ino, ctime_ns)


def _entry(st: os.stat_result) -> Entry:
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


def scan(root: Path, skip_top: Iterable[str] = ()) -> dict[str, Entry]:
    """Map every entry under ``root`` (relative posix path) to its stat facts; no symlink following."""
    skip = set(skip_top)
    out: dict[str, Entry] = {}
    stack = [""]
    root_s = str(root)
    while stack:
        rel = stack.pop()
        folder = os.path.join(root_s, rel) if rel else root_s
        try:
            it = os.scandir(folder)
        except PermissionError:
            os.chmod(folder, 0o700)  # the agent may have locked a folder; we own it
            it = os.scandir(folder)
        except (FileNotFoundError, NotADirectoryError):
            continue
        with it:
            for e in it:
                if not rel and e.name in skip:
                    continue
                p = f"{rel}/{e.name}" if rel else e.name
                try:
                    st = e.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                out[p] = _entry(st)
                if stat.S_ISDIR(st.st_mode):
                    stack.append(p)
    return out


@dataclass
class TreeState:
    """The recorded state of ``root`` and where its pristine copy lives."""

    root: Path
    pristine: Path
    entries: dict[str, Entry]
    skip_top: tuple[str, ...] = ()

    @classmethod
    def record(cls, root: Path, pristine: Path, skip_top: Iterable[str] = ()) -> TreeState:
        skip = tuple(skip_top)
        return cls(root=root, pristine=pristine, entries=scan(root, skip), skip_top=skip)

    def dirs(self) -> list[str]:
        return [p for p, e in self.entries.items() if stat.S_ISDIR(e[0])]

    # ---------------------------------------------------------------------------------------
    def restore_all(self) -> int:
        """Full-scan restore. Returns the number of entries repaired."""
        return self._restore(scan(self.root, self.skip_top), None)

    def restore_paths(self, paths: Iterable[str]) -> int:
        """Restore only ``paths`` (and what lies below them). Returns entries repaired."""
        current: dict[str, Entry] = {}
        todo = set()
        for p in paths:
            todo.add(p)
            full = self.root / p
            try:
                st = os.lstat(full)
            except FileNotFoundError:
                continue
            current[p] = _entry(st)
            if stat.S_ISDIR(st.st_mode) and p not in self.entries:
                pass  # whole new folder: removed below without looking inside
            elif stat.S_ISDIR(st.st_mode):
                for sub, e in scan(full).items():
                    current[f"{p}/{sub}"] = e
                    todo.add(f"{p}/{sub}")
        for p in list(todo):
            if p in self.entries and stat.S_ISDIR(self.entries[p][0]):
                todo.update(k for k in self.entries if k.startswith(p + "/"))
        return self._restore(current, todo)

    def _restore(self, current: dict[str, Entry], only: set[str] | None) -> int:
        fixed = 0
        removed_dirs: list[str] = []
        # 1) delete what should not be there (new entries, or an entry whose type changed)
        for p in sorted(current):
            if any(p.startswith(d + "/") for d in removed_dirs):
                continue
            want = self.entries.get(p)
            have = current[p]
            if want is None or stat.S_IFMT(want[0]) != stat.S_IFMT(have[0]):
                self._remove(p, have)
                fixed += 1
                if stat.S_ISDIR(have[0]):
                    removed_dirs.append(p)
                current.pop(p, None)
        # 2) bring back what is missing or changed, parents first
        keys = sorted(self.entries) if only is None else sorted(p for p in only if p in self.entries)
        dir_fixes: list[str] = []
        for p in keys:
            want = self.entries[p]
            have = current.get(p)
            if any(p.startswith(d + "/") for d in removed_dirs) and p in current:
                have = None
            if stat.S_ISDIR(want[0]):
                if have is None:
                    os.makedirs(self.root / p, exist_ok=True)
                    dir_fixes.append(p)
                    fixed += 1
                elif have[0] != want[0] or have[4] != want[4]:
                    dir_fixes.append(p)
                continue
            if have is not None and have[3] == want[3] and have[4] == want[4]:
                continue  # same inode, untouched since recorded
            self._copy_back(p, have)
            fixed += 1
        # 3) folder modes and times last (children were written into them above)
        for p in sorted(dir_fixes, reverse=True):
            src = self.pristine / p
            dst = self.root / p
            st = os.lstat(src)
            os.chmod(dst, stat.S_IMODE(st.st_mode))
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
            self.entries[p] = _entry(os.lstat(dst))
        return fixed

    def _remove(self, p: str, have: Entry) -> None:
        full = self.root / p
        if stat.S_ISDIR(have[0]):
            shutil.rmtree(full, onerror=_force_remove)
        else:
            try:
                os.unlink(full)
            except FileNotFoundError:
                pass
            except PermissionError:
                os.chmod(full.parent, 0o700)
                os.unlink(full)

    def _copy_back(self, p: str, have: Entry | None) -> None:
        src = self.pristine / p
        dst = self.root / p
        if have is not None:
            try:
                os.unlink(dst)
            except PermissionError:
                os.chmod(dst.parent, 0o700)
                os.unlink(dst)
            except FileNotFoundError:
                pass
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst, follow_symlinks=False)
        st = os.lstat(src)
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
        self.entries[p] = _entry(os.lstat(dst))


def _force_remove(func, path, exc_info) -> None:  # noqa: ANN001 - shutil.rmtree callback
    parent = os.path.dirname(path)
    try:
        os.chmod(parent, 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
            shutil.rmtree(path, onerror=_force_remove)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


# --------------------------------------------------------------------------------------------
# inotify (Linux): which entries changed since the last reset

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ISDIR = 0x40000000
IN_ONLYDIR = 0x01000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
_MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
)
_EVENT = struct.Struct("iIII")


def _libc():
    name = ctypes.util.find_library("c")
    lib = ctypes.CDLL(name or "libc.so.6", use_errno=True)
    lib.inotify_init1.argtypes = [ctypes.c_int]
    lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    return lib


class ChangeWatcher:
    """inotify watches on every original directory of a tree, collecting changed relative paths.

    ``changed()`` returns the set of touched paths, or None when it cannot be trusted (queue
    overflow, an original directory moved or deleted): then the caller does a full scan.
    """

    def __init__(self, root: Path, dirs: Iterable[str]):
        self.root = root
        self._lib = _libc()
        fd = self._lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.fd = fd
        self._wd: dict[int, str] = {}
        self._paths: set[str] = set()
        self._unsure = False
        try:
            for rel in ["", *dirs]:
                self._add(rel)
        except OSError:
            self.close()
            raise

    def _add(self, rel: str) -> None:
        full = os.path.join(str(self.root), rel) if rel else str(self.root)
        wd = self._lib.inotify_add_watch(self.fd, os.fsencode(full), _MASK)
        if wd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_add_watch {full}: {os.strerror(err)}")
        self._wd[wd] = rel

    def _read(self) -> None:
        while True:
            try:
                buf = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                raise
            if not buf:
                return
            off = 0
            while off < len(buf):
                wd, mask, _cookie, length = _EVENT.unpack_from(buf, off)
                name = buf[off + _EVENT.size : off + _EVENT.size + length].rstrip(b"\0").decode(
                    "utf-8", "surrogateescape"
                )
                off += _EVENT.size + length
                if mask & IN_Q_OVERFLOW:
                    self._unsure = True
                    continue
                if mask & IN_IGNORED:
                    continue
                rel = self._wd.get(wd)
                if rel is None:
                    continue
                if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                    self._unsure = True
                    continue
                if (mask & IN_ISDIR) and (mask & (IN_MOVED_FROM | IN_DELETE)):
                    self._unsure = True  # an original folder went away: its watch paths are stale
                path = f"{rel}/{name}" if rel and name else (name or rel)
                if not path:
                    self._unsure = True  # the root folder itself changed (chmod): rescan
                    continue
                self._paths.add(path)

    def changed(self) -> set[str] | None:
        self._read()
        return None if self._unsure else set(self._paths)

    def clear(self) -> None:
        """Forget everything seen so far (call after a reset has repaired the tree)."""
        self._read()
        self._paths.clear()
        self._unsure = False

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
