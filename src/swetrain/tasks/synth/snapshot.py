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

    def _commit_index(self, message: str, branch: str) -> str:
        tree = git(self.path, "write-tree").stdout.decode().strip()
        sha = git(self.path, "commit-tree", tree, "-p", self.clean, "-m", message).stdout.decode().strip()
        git(self.path, "update-ref", f"refs/heads/{branch}", sha)
        git(self.path, "read-tree", self.clean)  # the index (and working tree) stay on the clean commit
        return sha

    def add_file_change(self, relpath: str, content: str, instance_id: str) -> str:
        """Commit ``relpath`` with ``content`` on top of the clean commit; return the sha."""
        blob = git(self.path, "hash-object", "-w", "--stdin", input=content.encode("utf-8")).stdout.decode().strip()
        git(self.path, "read-tree", self.clean)
        mode = git(self.path, "ls-tree", self.clean, "--", relpath).stdout.decode().split()[0]
        git(self.path, "update-index", "--cacheinfo", f"{mode},{blob},{relpath}")
        return self._commit_index(f"swetrain task {instance_id}", f"tasks/{instance_id}")

    def add_reverse_patch(self, patch: str, instance_id: str) -> str:
        """Commit the clean tree with ``patch`` reversed (the buggy state of a shipped task)."""
        git(self.path, "read-tree", self.clean)
        git(self.path, "apply", "--cached", "-R", "--whitespace=nowarn", "-", input=patch.encode("utf-8"))
        return self._commit_index(f"swetrain task {instance_id}", f"tasks/{instance_id}")

    def gold_patch(self, base: str) -> str:
        """The diff that turns ``base`` (a buggy commit) back into the clean tree."""
        return git(self.path, "diff", "--no-color", "--no-ext-diff", base, self.clean).stdout.decode("utf-8")

    def has_commit(self, sha: str) -> bool:
        return git(self.path, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0
