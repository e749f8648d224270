"""One git repository per project: the clean tree as ``main`` and one commit per task on top of it.

All task commits share one object store, so a project with 50 tasks costs one copy of its tree plus
50 one-file commits. Each task commit is the BUGGY state (the task's ``base_commit``) and is also
kept reachable as branch ``tasks/<instance_id>`` so clones and ``git gc`` keep it. Commits are made
with plumbing (index -> tree -> commit-tree) and the fixed identity/dates of
:mod:`swetrain.env.gitutil`, so the same tree and mutation give the same sha on every machine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from swetrain.env.gitutil import git

_EVERYWHERE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", "*.pyo", ".pytest_cache", ".mypy_cache",
                                     "*.egg-info", ".DS_Store")
_TOP_ONLY = {".tox", ".nox", ".venv", "venv", ".eggs", "build", "dist", ".swetrain"}
_MESSAGE_CLEAN = "swetrain snapshot"


def copy_tree(src: str | Path, dest: str | Path) -> Path:
    """Copy a source tree without caches/VCS/build output and with normalised file modes."""
    src, dest = Path(src), Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    top = str(src.resolve())

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = set(_EVERYWHERE(folder, names))
        if str(Path(folder).resolve()) == top:
            skipped |= _TOP_ONLY & set(names)
        return skipped

    shutil.copytree(src, dest, ignore=ignore, symlinks=False)
    for dirpath, _dirnames, filenames in os.walk(dest):  # modes are part of the commit: normalise them
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o644)
    return dest


class ProjectRepo:
    """The snapshot repository of one project (``path``) with its clean commit ``clean``."""

    def __init__(self, path: str | Path, clean: str):
        self.path = Path(path)
        self.clean = clean

    @classmethod
    def create(cls, src: str | Path, dest: str | Path) -> ProjectRepo:
        """Snapshot ``src`` into a fresh repository at ``dest`` (replaced if present)."""
        dest = Path(dest)
        staging = Path(tempfile.mkdtemp(prefix="swetrain-snap-", dir=dest.parent if dest.parent.exists() else None))
        try:
            copy_tree(src, staging / "tree")
            if dest.exists():
                shutil.rmtree(dest)
            shutil.move(str(staging / "tree"), dest)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        git(dest, "init", "-q", "-b", "main")
        git(dest, "config", "gc.auto", "0")
        git(dest, "add", "-A", "-f")
        git(dest, "commit", "-q", "--no-gpg-sign", "-m", _MESSAGE_CLEAN)
        return cls(dest, git(dest, "rev-parse", "HEAD").stdout.decode().strip())

    @classmethod
    def open(cls, path: str | Path) -> ProjectRepo:
        path = Path(path)
        return cls(path, git(path, "rev-parse", "main").stdout.decode().strip())

    def _commit_index(self, message: str, branch: str, restore: bool = True) -> str:
        tree = git(self.path, "write-tree").stdout.decode().strip()
        sha = git(self.path, "commit-tree", tree, "-p", self.clean, "-m", message).stdout.decode().strip()
        git(self.path, "update-ref", f"refs/heads/{branch}", sha)
        if restore:
            git(self.path, "read-tree", self.clean)  # the index (and working tree) stay on the clean commit
        return sha

    def add_file_change(self, relpath: str, content: str, instance_id: str) -> str:
        """Commit ``relpath`` with ``content`` on top of the clean commit; return the sha."""
        blob = git(self.path, "hash-object", "-w", "--stdin", input=content.encode("utf-8")).stdout.decode().strip()
        git(self.path, "read-tree", self.clean)
        mode = git(self.path, "ls-tree", self.clean, "--", relpath).stdout.decode().split()[0]
        git(self.path, "update-index", "--cacheinfo", f"{mode},{blob},{relpath}")
        return self._commit_index(f"swetrain task {instance_id}", f"tasks/{instance_id}")

    def add_reverse_patch(self, patch: str, instance_id: str, restore: bool = True) -> str:
        """Commit the clean tree with ``patch`` reversed (the buggy state of a shipped task).

        ``restore=False`` leaves the index on the buggy tree (call :meth:`restore_index` after a
        batch): one git process less per task when materialising hundreds of them.
        """
        git(self.path, "read-tree", self.clean)
        git(self.path, "apply", "--cached", "-R", "--whitespace=nowarn", "-", input=patch.encode("utf-8"))
        return self._commit_index(f"swetrain task {instance_id}", f"tasks/{instance_id}", restore)

    def add_reverse_patches(self, items: list[tuple[str, str]]) -> dict[str, str]:
        """Batch form of :meth:`add_reverse_patch` for many ``(instance_id, patch)`` pairs: one
        ``git fast-import`` process instead of four git calls per task. Commits are identical
        (same trees, parent, identity, dates and message). Returns ``{instance_id: sha}``."""
        from swetrain.env.gitutil import GIT_ENV

        stamp = _fast_import_stamp(GIT_ENV)
        stream = bytearray()
        blobs: dict[str, str] = {}
        modes: dict[str, str] = {}
        for mark, (instance_id, patch) in enumerate(items, start=1):
            files = reverse_apply(patch, lambda rel: blobs[rel] if rel in blobs else blobs.setdefault(rel, self._clean_blob(rel)))
            msg = f"swetrain task {instance_id}\n".encode()
            stream += f"commit refs/heads/tasks/{instance_id}\nmark :{mark}\n".encode()
            stream += f"author {stamp[0]}\ncommitter {stamp[1]}\n".encode()
            stream += b"data %d\n" % len(msg) + msg + f"from {self.clean}\n".encode()
            for rel, content in files.items():
                data = content.encode("utf-8")
                mode = modes[rel] if rel in modes else modes.setdefault(rel, self._mode(rel))
                stream += f"M {mode} inline {rel}\n".encode() + b"data %d\n" % len(data) + data + b"\n"
            stream += b"\n"
        marks = self.path / ".git" / "swetrain-marks"
        git(self.path, "fast-import", "--quiet", f"--export-marks={marks}", input=bytes(stream))
        by_mark = dict(line.split() for line in marks.read_text().splitlines())
        marks.unlink()
        return {iid: by_mark[f":{i}"] for i, (iid, _p) in enumerate(items, start=1)}

    def _clean_blob(self, rel: str) -> str:
        return git(self.path, "show", f"{self.clean}:{rel}").stdout.decode("utf-8")

    def _mode(self, rel: str) -> str:
        return git(self.path, "ls-tree", self.clean, "--", rel).stdout.decode().split()[0]

    def restore_index(self) -> None:
        git(self.path, "read-tree", self.clean)

    def gold_patch(self, base: str) -> str:
        """The diff that turns ``base`` (a buggy commit) back into the clean tree."""
        return git(self.path, "diff", "--no-color", "--no-ext-diff", base, self.clean).stdout.decode("utf-8")


def _fast_import_stamp(env: dict[str, str]) -> tuple[str, str]:
    """``Name <email> epoch tz`` for author and committer, from gitutil's fixed identity."""
    from datetime import datetime

    def one(who: str) -> str:
        when = datetime.fromisoformat(env[f"GIT_{who}_DATE"])
        tz = when.strftime("%z") or "+0000"
        return f"{env[f'GIT_{who}_NAME']} <{env[f'GIT_{who}_EMAIL']}> {int(when.timestamp())} {tz}"

    return one("AUTHOR"), one("COMMITTER")


def reverse_apply(patch: str, read_new) -> dict[str, str]:
    """Undo a unified diff: ``read_new(path)`` gives the patched ("new") file; returns the
    original ("old") content per modified file. Raises ValueError when a hunk does not match."""
    from unidiff import PatchSet

    out: dict[str, str] = {}
    for pf in PatchSet(patch):
        if pf.is_added_file or pf.is_removed_file or pf.is_rename:
            raise ValueError(f"{pf.path}: only in-place modifications can be reversed")
        lines = read_new(pf.path).splitlines(keepends=True)
        offset = 0
        for h in pf:
            new_side = [ln.value for ln in h if ln.is_context or ln.is_added]
            old_side = [ln.value for ln in h if ln.is_context or ln.is_removed]
            start = h.target_start - 1 + offset if h.target_length else h.target_start + offset
            if lines[start:start + len(new_side)] != new_side:
                raise ValueError(f"{pf.path}: hunk at line {h.target_start} does not match")
            lines[start:start + len(new_side)] = old_side
            offset += len(old_side) - len(new_side)
        out[pf.path] = "".join(lines)
    return out
