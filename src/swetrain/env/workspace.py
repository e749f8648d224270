"""Working copies of a task's repository that run commands under limits and reset exactly.

Layout of one workspace (``base`` is a private temp folder)::

    base/repo      the working tree (``Workspace.path``); ``/testbed`` inside the sandbox
    base/git.orig  a copy of repo/.git as created (outside the tree: the agent cannot touch it)
    base/home      HOME and TMPDIR of unisolated commands (bwrap gives each command its own /tmp)

Many workspaces of one task share a *pristine snapshot*: one checkout of ``base_commit`` per
(source, commit) under ``$SWETRAIN_HOME/pristine``, built once with ``git clone`` (objects
hard-linked) and reused. A workspace is a ``cp -a`` of its files plus a small ``.git`` whose
objects come from the snapshot through git alternates, so G*R workspaces cost one object store.

``reset()`` kills every process of the workspace, then repairs only what changed (see
:mod:`swetrain.env.tree`): tracked, untracked and ignored files, modes, mtimes, ``.git`` (commits,
branches, stashes and objects an attempt made are gone), and runs registered reset hooks (the
editor's undo history).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from swetrain.env.gitutil import GitError, git
from swetrain.env.sandbox import (
    MARKER_VAR,
    SANDBOX_ROOT,
    CommandResult,
    Limits,
    PidsCgroup,
    bwrap_available,
    bwrap_command,
    kill_marked,
    new_marker,
    run_limited,
)
from swetrain.env.tree import ChangeWatcher, TreeState
from swetrain.paths import cache_dir
from swetrain.tasks.record import Task

__all__ = ["CommandResult", "Limits", "Workspace", "WorkspaceError", "pristine_snapshot"]


class WorkspaceError(RuntimeError):
    """A workspace could not be created or used; the message names the task and the cause."""


_PRISTINE_LOCK = threading.Lock()

# Folders of swetrain itself that sandboxed commands read (the verifier's pytest plugins). Bound
# read-only like the interpreter, so they stay visible when swetrain lives under /tmp (e.g. an
# editable install of a checkout there), which the sandbox's private /tmp would otherwise hide.
PYTEST_PLUGIN_DIR = Path(__file__).resolve().parent / "pytest_plugins"


def pristine_snapshot(task: Task) -> Path:
    """The shared read-only checkout of ``task.base_commit`` (built on first use).

    Keyed by the source path and the commit; built in a temp folder and renamed into place, so
    concurrent builders (threads or processes) never see a half-made snapshot.
    """
    source = task.source_path()
    if source is None:
        raise WorkspaceError(f"task {task.instance_id!r}: field 'source' is empty (no repository snapshot)")
    if not (source / ".git").exists() and not (source / "HEAD").exists():
        raise WorkspaceError(f"task {task.instance_id!r}: source {source} is not a git repository")
    commit = task.base_commit.strip()
    if not commit:
        raise WorkspaceError(f"task {task.instance_id!r}: field 'base_commit' is empty")
    try:
        full = git(source, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").stdout.decode().strip()
    except GitError:
        raise WorkspaceError(
            f"task {task.instance_id!r}: base_commit {commit} is not a commit of source {source}"
        ) from None
    key = hashlib.sha1(str(source).encode()).hexdigest()[:12] + "-" + full
    final = cache_dir("pristine") / key
    if (final / ".swetrain-ready").exists():
        return final / "repo"
    with _PRISTINE_LOCK:
        if (final / ".swetrain-ready").exists():
            return final / "repo"
        tmp = final.with_name(f"{key}.tmp-{uuid.uuid4().hex[:8]}")
        tmp.mkdir(parents=True)
        try:
            clone_opts = ["--no-hardlinks"] if _cross_device(source, tmp) else []
            git(tmp, "clone", "-q", "--no-checkout", *clone_opts, str(source), "repo")
            git(tmp / "repo", "checkout", "-q", "--detach", full)
            git(tmp / "repo", "config", "core.checkStat", "minimal")
            git(tmp / "repo", "config", "core.trustctime", "false")
            (tmp / ".swetrain-ready").write_text(full + "\n")
            try:
                os.rename(tmp, final)
            except OSError:  # someone else finished first
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return final / "repo"


def _cross_device(a: Path, b: Path) -> bool:
    try:
        return os.stat(a).st_dev != os.stat(b).st_dev
    except OSError:
        return True


class Workspace:
    """One working copy of a task at ``base_commit``: run commands, diff, reset, close."""

    def __init__(
        self,
        task: Task,
        base: Path,
        pristine: Path,
        limits: Limits,
        isolated: bool,
        keep: bool = False,
    ):
        self.task = task
        self.base = base
        self.path = base / "repo"
        self.pristine = pristine
        self.limits = limits
        self.isolated = isolated
        self.keep = keep
        self.marker = new_marker()
        self._reset_hooks: list[Callable[[], None]] = []
        self._running: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self._closed = False
        env_path = task.environment_path()
        if env_path is not None and not (env_path / "bin").is_dir():
            raise WorkspaceError(f"task {task.instance_id!r}: environment {env_path} has no bin/ folder (not a venv)")
        self.environment = env_path
        self.cgroup = PidsCgroup.create(f"swetrain-{self.marker[:16]}", limits.nproc)
        self._tree: TreeState | None = None
        self._git_tree: TreeState | None = None
        self._watcher: ChangeWatcher | None = None

    # ------------------------------------------------------------------------------- creation
    @classmethod
    def create(
        cls,
        task: Task,
        *,
        root: str | Path | None = None,
        limits: Limits | None = None,
        isolated: bool | None = None,
        keep: bool = False,
    ) -> Workspace:
        """A fresh working copy of ``task`` at ``base_commit``.

        ``root``: folder to create the workspace in (default: the system temp folder).
        ``isolated``: None = bubblewrap when available; True = require it; False = plain processes.
        """
        if isolated is None:
            isolated = bwrap_available()
        elif isolated and not bwrap_available():
            raise WorkspaceError("isolated=True but bubblewrap (bwrap) is not available on this machine")
        pristine = pristine_snapshot(task)
        if root is not None:
            Path(root).mkdir(parents=True, exist_ok=True)
        base = Path(tempfile.mkdtemp(prefix="swetrain-ws-", dir=None if root is None else str(root))).resolve()
        try:
            ws = cls(task, base, pristine, limits or Limits(), isolated, keep)
        except BaseException:
            shutil.rmtree(base, ignore_errors=True)
            raise
        try:
            ws._populate()
        except BaseException:
            ws.close()
            raise
        return ws

    def _populate(self) -> None:
        self.path.mkdir()
        (self.base / "home").mkdir()
        entries = [str(self.pristine / n) for n in sorted(os.listdir(self.pristine)) if n != ".git"]
        if entries:
            proc = subprocess.run(
                ["cp", "-a", "--reflink=auto", "-t", str(self.path), *entries], capture_output=True
            )
            if proc.returncode != 0:
                raise WorkspaceError(f"copying {self.pristine} failed: {proc.stderr.decode(errors='replace')}")
        # A small .git whose objects live in the pristine snapshot (git alternates).
        src_git = self.pristine / ".git"
        shutil.copytree(src_git, self.path / ".git", symlinks=True, ignore=_ignore_objects(src_git))
        info = self.path / ".git" / "objects" / "info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "alternates").write_text(str(src_git / "objects") + "\n")
        shutil.copytree(self.path / ".git", self.base / "git.orig", symlinks=True)
        self._tree = TreeState.record(self.path, self.pristine, skip_top=(".git",))
        self._git_tree = TreeState.record(self.path / ".git", self.base / "git.orig")
        self._watch()

    def _watch(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        assert self._tree is not None
        try:
            self._watcher = ChangeWatcher(self.path, self._tree.dirs())
        except (OSError, AttributeError):  # no inotify (non-Linux, watch limit): full scans
            self._watcher = None

    # ------------------------------------------------------------------------------- commands
    @property
    def agent_root(self) -> str:
        """The workspace path as commands (and the agent) see it."""
        return SANDBOX_ROOT if self.isolated else str(self.path)

    def command_env(self) -> dict[str, str]:
        """Environment of commands: the task's venv (or this interpreter) first on PATH."""
        bindir = str(self.environment / "bin") if self.environment else str(Path(sys.executable).parent)
        root = self.agent_root
        pypath = [f"{root}/src"] if (self.pristine / "src").is_dir() else []
        pypath.append(root)
        home = "/tmp" if self.isolated else str(self.base / "home")
        env = {
            "PATH": bindir + os.pathsep + os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": home,
            "TMPDIR": home,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TERM": "dumb",
            "PAGER": "cat",
            "GIT_PAGER": "cat",
            "PIP_NO_INPUT": "1",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join(pypath),
            "GIT_CONFIG_NOSYSTEM": "1",
            MARKER_VAR: self.marker,
        }
        if self.environment:
            env["VIRTUAL_ENV"] = str(self.environment)
        return env

    def run(self, cmd: str, timeout: float | None = None, *, stdin: bytes | None = None) -> CommandResult:
        """Run ``cmd`` with ``bash -c`` in the workspace; never raises for a failing command."""
        self._check_open()
        argv = ["bash", "-c", cmd]
        if self.isolated:
            extra = [self.pristine.parent, self.base / "git.orig", Path(sys.prefix), Path(sys.base_prefix), PYTEST_PLUGIN_DIR]
            if self.environment:
                extra.append(self.environment)
            argv = bwrap_command(argv, self.path, readonly_extra=extra)
        return run_limited(
            argv,
            cwd=self.path,
            env=self.command_env(),
            limits=self.limits,
            timeout=timeout,
            stdin=stdin,
            cgroup=self.cgroup,
            on_start=self._track,
        )

    def _track(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._running = {p for p in self._running if p.poll() is None}
            self._running.add(proc)

    def kill_all(self) -> None:
        """Kill every process this workspace started (running commands and anything they left)."""
        with self._lock:
            running = list(self._running)
            self._running.clear()
        for proc in running:
            try:
                os.killpg(proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
        if self.cgroup is not None:
            self.cgroup.kill_all()
        if not self.isolated and self.cgroup is None:
            kill_marked(self.marker)  # processes that left the process group (setsid, daemons)

    # ------------------------------------------------------------------------------- state
    def add_reset_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` on every reset (tools clear their own state this way)."""
        self._reset_hooks.append(hook)

    def reset(self) -> int:
        """Restore the exact initial state; returns the number of entries repaired."""
        self._check_open()
        self.kill_all()
        assert self._tree is not None and self._git_tree is not None
        changed = self._watcher.changed() if self._watcher is not None else None
        if changed is None:
            fixed = self._tree.restore_all()
            self._watch()  # original folders may have been replaced: watch the new ones
        else:
            fixed = self._tree.restore_paths(changed) if changed else 0
            self._watcher.clear()  # drop the events our own repairs caused
        fixed += self._git_tree.restore_all()
        home = self.base / "home"
        if any(home.iterdir()):
            shutil.rmtree(home, ignore_errors=True)
            home.mkdir(exist_ok=True)
        for hook in self._reset_hooks:
            hook()
        return fixed

    def diff(self) -> str:
        """``git diff --binary`` of the tree against ``base_commit``, new untracked files included.

        Runs git on the host with the pristine ``git.orig`` as git dir, a throw-away index and a
        throw-away object folder: whatever the agent did to ``.git`` (config, hooks, fsmonitor)
        is never executed or relied upon. Ignored files are not part of the patch.
        """
        self._check_open()
        scratch = Path(tempfile.mkdtemp(prefix="diff-", dir=self.base))
        try:
            shutil.copy2(self.base / "git.orig" / "index", scratch / "index")
            env = {
                "GIT_DIR": str(self.base / "git.orig"),
                "GIT_WORK_TREE": str(self.path),
                "GIT_INDEX_FILE": str(scratch / "index"),
                "GIT_OBJECT_DIRECTORY": str(scratch / "objects"),
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.pristine / ".git" / "objects"),
            }
            (scratch / "objects").mkdir()
            opts = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
            git(self.path, *opts, "add", "-A", "--", ".", env=env)
            out = git(
                self.path, *opts, "diff", "--cached", "--binary", "--no-color", "--no-ext-diff",
                "--no-textconv", "--full-index", self.task.base_commit, env=env,
            ).stdout
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return out.decode("utf-8", errors="surrogateescape")

    # ------------------------------------------------------------------------------- lifetime
    def _check_open(self) -> None:
        if self._closed:
            raise WorkspaceError(f"workspace {self.base} is closed")

    def close(self) -> None:
        """Kill its processes and delete the working copy (unless ``keep``)."""
        if self._closed:
            return
        self._closed = True
        self.kill_all()
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        if self.cgroup is not None:
            self.cgroup.remove()
        if not self.keep:
            shutil.rmtree(self.base, ignore_errors=True, onerror=None)
            if self.base.exists():  # a locked folder the agent chmod-ed
                subprocess.run(["chmod", "-R", "u+rwx", str(self.base)], capture_output=True)
                shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # last resort; close() is the contract
        try:
            if not self._closed:
                self.close()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass

    def __repr__(self) -> str:
        return f"Workspace({self.task.instance_id!r}, path={str(self.path)!r}, isolated={self.isolated})"


def _ignore_objects(git_dir: Path):
    objects = str(git_dir / "objects")

    def ignore(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if n not in ("info",)] if folder == objects else []

    return ignore
