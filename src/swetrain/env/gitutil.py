"""Small git helpers: run git, and make deterministic snapshots of a source tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

#: Fixed identity and dates make snapshot commits (and thus base_commit) reproducible.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "swetrain",
    "GIT_AUTHOR_EMAIL": "swetrain@localhost",
    "GIT_COMMITTER_NAME": "swetrain",
    "GIT_COMMITTER_EMAIL": "swetrain@localhost",
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2025-01-01T00:00:00+0000",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}


class GitError(RuntimeError):
    """A git command failed; the message holds the command and git's stderr."""


def git(
    repo: str | Path,
    *args: str,
    input: bytes | None = None,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """Run ``git -C repo args...`` with a fixed identity; raise GitError naming the command.

    ``env`` adds variables (e.g. GIT_DIR, GIT_INDEX_FILE) on top of the fixed identity.
    """
    env = {**os.environ, **GIT_ENV, "HOME": os.environ.get("HOME", "/tmp"), **(env or {})}
    proc = subprocess.run(
        ["git", "-c", "core.autocrlf=false", "-c", "safe.directory=*", "-C", str(repo), *args],
        input=input,
        capture_output=True,
        env=env,
    )
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)} in {repo} failed ({proc.returncode}): {proc.stderr.decode(errors='replace').strip()}")
    return proc


def init_snapshot(src: str | Path, dest: str | Path, message: str = "swetrain snapshot") -> str:
    """Copy ``src`` to ``dest`` (replacing it), commit every file, return the commit sha.

    The commit is deterministic for identical trees (fixed author, committer and dates), so a task
    file's ``base_commit`` stays valid when the snapshot is rebuilt on another machine.
    """
    src, dest = Path(src), Path(dest)
    if not src.is_dir():
        raise FileNotFoundError(f"snapshot source {src} is not a directory")
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache"))
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A", "-f")
    git(dest, "commit", "-q", "--no-gpg-sign", "-m", message)
    return git(dest, "rev-parse", "HEAD").stdout.decode().strip()


def commit_all(repo: str | Path, message: str) -> str:
    """Commit every change in ``repo`` (deterministic identity/date) and return the new sha."""
    git(repo, "add", "-A", "-f")
    git(repo, "commit", "-q", "--no-gpg-sign", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").stdout.decode().strip()
