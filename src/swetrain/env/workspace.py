"""Working copies of a task's repository that run commands under limits and reset exactly.

Layout of one workspace (``base`` is a private temp folder)::

    base/repo      the working tree (``Workspace.path``); ``/testbed`` as the agent sees it
    base/home      HOME and TMPDIR of unisolated commands (bwrap gives each command its own /tmp)

Many workspaces of one task share a *pristine snapshot*: one single-commit repository per
(source, commit) under ``$SWETRAIN_HOME/pristine``, holding only the task's initial state (no
history, no other refs, no objects that commit does not reach). A workspace is a ``cp -a`` of it,
``.git`` included (no alternates: nothing in the workspace points at a store outside it).

``reset()`` kills every process of the workspace, then repairs only what changed (see
:mod:`swetrain.env.tree`): tracked, untracked and ignored files, modes, mtimes, ``.git`` (commits,
branches, stashes and objects an attempt made are gone), and runs registered reset hooks (the
editor's undo history).

The agent sees the repository at ``/testbed`` on every path. Under bubblewrap that is a bind
mount; without it (``isolated=False``) commands run on the host and ``/testbed`` is translated:
in the command text to the host path, and the host path back to ``/testbed`` in the output.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from swetrain.env.gitutil import GitError, git
from swetrain.env.interface import (
    PYTEST_PLUGIN_DIR,
    SANDBOX_ROOT,
    CommandResult,
    DirEntry,
    Limits,
    Reader,
    WorkspaceBackend,
    WorkspaceError,
)
from swetrain.env.protect import tree_reader
from swetrain.env.sandbox import (
    MARKER_VAR,
    RUNTIME_DIRS,
    PidsCgroup,
    bwrap_available,
    bwrap_command,
    hidden_paths,
    isolation_note,
    warn_unisolated_once,
    kill_marked,
    new_marker,
    run_limited,
    to_agent_paths,
    to_host_paths,
)
from swetrain.env.taskenv import TaskEnvError, check_environment, default_task_env
from swetrain.env.tree import ChangeWatcher, TreeState
from swetrain.paths import build_once, cache_dir
from swetrain.tasks.record import Task

__all__ = ["CommandResult", "Limits", "Workspace", "WorkspaceError", "pristine_snapshot"]


_PRISTINE_LOCK = threading.Lock()


SNAPSHOT_MESSAGE = "swetrain: task base state"
_SNAPSHOT_LAYOUT = "v2-single-commit"


def pristine_snapshot(task: Task) -> Path:
    """The shared read-only checkout of ``task.base_commit`` (built on first use).

    The snapshot is a *fresh* repository holding exactly the task's initial state: one root commit
    (``SNAPSHOT_MESSAGE``, fixed identity and date, so its sha is reproducible) whose tree is
    ``base_commit``'s tree, one branch ``main``, no other refs, reflogs, stashes or tags, no
    remote, no hooks, and one pack with only the objects that commit reaches. Nothing of the
    source's history (which for built-in and synthesized tasks holds the fixed code) is copied.

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
    final = cache_dir("pristine", _SNAPSHOT_LAYOUT) / key

    def build(tmp: Path) -> None:
        tmp.mkdir(parents=True)
        head = _build_single_commit(task, source, full, tmp)
        (tmp / ".swetrain-ready").write_text(json.dumps({"base_commit": full, "head": head}) + "\n")

    return build_once(final, _PRISTINE_LOCK, build) / "repo"


def snapshot_head(pristine: Path) -> str:
    """The commit a pristine snapshot (from :func:`pristine_snapshot`) holds."""
    return json.loads((pristine.parent / ".swetrain-ready").read_text())["head"]


def _build_single_commit(task: Task, source: Path, full: str, tmp: Path) -> str:
    """Make ``tmp/repo``: a one-commit repository of ``full``'s tree; return that commit's sha."""
    iid = task.instance_id
    tree = git(source, "rev-parse", f"{full}^{{tree}}").stdout.decode().strip()
    repo = tmp / "repo"
    git(tmp, "init", "-q", "-b", "main", "repo")
    # Only the objects that the tree reaches travel: pack them straight out of the source.
    pack = git(source, "pack-objects", "--revs", "--stdout", "-q", input=f"{tree}\n".encode()).stdout
    if not pack:
        raise WorkspaceError(f"task {iid!r}: could not pack the tree of base_commit {full[:12]} from {source}")
    git(repo, "index-pack", "--stdin", input=pack)
    head = git(repo, "commit-tree", tree, "-m", SNAPSHOT_MESSAGE).stdout.decode().strip()
    git(repo, "-c", "core.logAllRefUpdates=false", "update-ref", "refs/heads/main", head)
    git(repo, "-c", "core.logAllRefUpdates=false", "reset", "-q", "--hard", "main")
    for name, value in (("core.checkStat", "minimal"), ("core.trustctime", "false"), ("gc.auto", "0")):
        git(repo, "config", name, value)
    git(repo, "repack", "-a", "-d", "-q")
    git(repo, "prune", "--expire=now")
    dot = repo / ".git"
    for leftover in ("logs", "hooks", "ORIG_HEAD", "FETCH_HEAD", "description", "info/exclude"):
        path = dot / leftover
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    _check_single_commit(iid, repo, head)
    return head


def _check_single_commit(iid: str, repo: Path, head: str) -> None:
    """Refuse a snapshot that holds anything but ``head`` and the objects it reaches."""
    refs = git(repo, "for-each-ref", "--format=%(refname)").stdout.decode().split()
    problems = []
    if refs != ["refs/heads/main"]:
        problems.append(f"refs {refs} (want only refs/heads/main)")
    if git(repo, "rev-list", "--all").stdout.decode().split() != [head]:
        problems.append("more than one commit")
    listing = git(repo, "rev-list", "--objects", "--all").stdout.decode().splitlines()
    reachable_ids = {line.split()[0] for line in listing if line.strip()}
    stored = set()
    for idx in (repo / ".git" / "objects" / "pack").glob("*.idx"):
        out = git(repo, "show-index", input=idx.read_bytes()).stdout.decode()
        stored.update(line.split()[1] for line in out.splitlines() if line.strip())
    loose = [p for p in (repo / ".git" / "objects").glob("??/*")]
    if loose or stored != reachable_ids:
        problems.append(f"object store holds {len(stored) + len(loose)} objects, {len(reachable_ids)} reachable")
    if (repo / ".git" / "objects" / "info" / "alternates").exists():
        problems.append("alternates")
    if problems:
        raise WorkspaceError(f"task {iid!r}: the snapshot cannot be made single-commit: {'; '.join(problems)}")


def interpreter_roots(env: Path) -> list[Path]:
    """Host prefixes a virtual environment's interpreter needs: the base installation its
    ``pyvenv.cfg`` names (``home`` is that installation's ``bin``)."""
    roots: list[Path] = []
    cfg = env / "pyvenv.cfg"
    if cfg.is_file():
        for line in cfg.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                roots.append(Path(value.strip()).parent)
    python = env / "bin" / "python"
    if python.exists():
        roots.append(Path(os.path.realpath(python)).parent.parent)
    if not roots:
        roots.append(env)
    return list(dict.fromkeys(Path(os.path.realpath(p)) for p in roots))


class Workspace(WorkspaceBackend):
    """One working copy of a task at ``base_commit``: run commands, diff, reset, close.

    The ``local`` backend of :class:`~swetrain.env.backend.WorkspaceBackend`."""

    backend = "local"

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
        self.head = snapshot_head(pristine)  # the snapshot's one commit (same tree as base_commit)
        self.limits = limits
        self.isolated = isolated
        self.keep = keep
        self.marker = new_marker()
        self._reset_hooks: list[Callable[[], None]] = []
        self._running: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self._closed = False
        env_path = task.environment_path()
        if env_path is None:  # the default task environment (env/taskenv.py), never swetrain's own interpreter
            try:
                env_path = default_task_env()
            except TaskEnvError as exc:
                raise WorkspaceError(str(exc)) from None
        if not (env_path / "bin").is_dir():
            raise WorkspaceError(f"task {task.instance_id!r}: environment {env_path} has no bin/ folder (not a venv)")
        self.environment = env_path
        self.cgroup = PidsCgroup.create(f"swetrain-{self.marker[:16]}", limits.nproc)
        self._tree: TreeState | None = None
        self._git_tree: TreeState | None = None
        self._watcher: ChangeWatcher | None = None

    # ------------------------------------------------------------------------------- the backend
    @classmethod
    def open(cls, task: Task, *, limits: Limits | None = None, root: str | Path | None = None,
             isolated: bool | None = None, one_shot: bool = False) -> Workspace:
        """:meth:`create` (a reset is as cheap as ever: ``one_shot`` changes nothing here)."""
        return cls.create(task, root=root, limits=limits, isolated=isolated)

    @classmethod
    def preflight(cls, tasks: Sequence[Task]) -> None:
        """Each distinct environment of ``tasks`` (the default one when a task names none, and
        for an empty list) can run tests: the runner imports, the verifier's plugin loads."""
        envs: dict[str, str] = {}
        for task in tasks or [None]:
            path = task.environment_path() if task is not None else None
            if path is None:
                envs.setdefault("default", "the default task environment")
            else:
                envs.setdefault(str(path), f"task environment {path} (task {task.instance_id})")
        try:
            for key, label in envs.items():
                env = default_task_env() if key == "default" else Path(key)
                if key == "default":
                    label = f"{label} {env}" + (" (from $SWETRAIN_TASK_ENV)" if os.environ.get("SWETRAIN_TASK_ENV") else "")
                check_environment(env, PYTEST_PLUGIN_DIR, label=label)
        except TaskEnvError as exc:
            raise WorkspaceError(str(exc)) from None

    @classmethod
    def isolation_record(cls) -> dict[str, Any]:
        """Bubblewrap when it works here (no network, the system runtime read-only), else none."""
        isolated = bwrap_available()
        return {
            "isolated": isolated,
            "backend": "bubblewrap" if isolated else "none",
            "agent_root": SANDBOX_ROOT,
            "network": not isolated,
            "visible": sorted("/" + d for d in RUNTIME_DIRS if os.path.isdir("/" + d)) if isolated else ["/"],
            "note": isolation_note(),
        }

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
            if not isolated:
                warn_unisolated_once()
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
        # The whole snapshot, .git with its own objects included (one small pack; no alternates).
        entries = [str(self.pristine / n) for n in sorted(os.listdir(self.pristine))]
        if entries:
            proc = subprocess.run(
                ["cp", "-a", "--reflink=auto", "-t", str(self.path), *entries], capture_output=True
            )
            if proc.returncode != 0:
                raise WorkspaceError(f"copying {self.pristine} failed: {proc.stderr.decode(errors='replace')}")
        self._tree = TreeState.record(self.path, self.pristine, skip_top=(".git",))
        self._git_tree = TreeState.record(self.path / ".git", self.pristine / ".git")
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
        """The workspace path as the agent sees it: ``/testbed`` on every path."""
        return SANDBOX_ROOT

    @property
    def exec_root(self) -> str:
        """The workspace path as commands see it (the host path when not isolated)."""
        return SANDBOX_ROOT if self.isolated else str(self.path)

    def command_env(self) -> dict[str, str]:
        """Environment of commands: the task's environment (env/taskenv.py) first on PATH."""
        bindir = str(self.environment / "bin")
        root = self.exec_root
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
            # a fixed str hash: the repr of a set (in a failing test's message) is the same in
            # every run, so one action gives one observation and records depend only on seeds
            "PYTHONHASHSEED": "0",
            "PYTHONPATH": os.pathsep.join(pypath),
            "GIT_CONFIG_NOSYSTEM": "1",
            MARKER_VAR: self.marker,
        }
        env["VIRTUAL_ENV"] = str(self.environment)
        return env

    def interpreter_roots(self) -> list[Path]:
        """The prefixes of the interpreter the task environment is made from (its ``pyvenv.cfg``
        ``home``; the environment itself when it is a full installation)."""
        return interpreter_roots(self.environment)

    def sandbox_binds(self) -> list[Path]:
        """Read-only host paths a command needs beyond the system runtime (see ``bwrap_command``):
        the base interpreter, the verifier's pytest plugins, the task environment. The plugins are
        bound like the interpreter, so they stay visible when swetrain lives under /tmp (an
        editable install of a checkout there), which the sandbox's private /tmp would hide."""
        return [*self.interpreter_roots(), PYTEST_PLUGIN_DIR, self.environment]

    def pytest_plugin_dir(self) -> str:
        """The plugins' host folder: bound at the same path inside the sandbox (:meth:`sandbox_binds`)."""
        return str(PYTEST_PLUGIN_DIR)

    def shared_roots(self, visible: list[str], *, runtime: bool = True) -> list[str]:
        """The system runtime and the interpreter (same in every sandbox; left out without
        ``runtime``), the other binds (task environment, plugin folder) by their own paths, and a
        visible top-level folder none of these explains, whole. None when unisolated: the whole
        host is visible then."""
        if not self.isolated:
            return []
        prefixes = [str(p) for p in self.interpreter_roots()]
        system = [f"/{d}" for d in RUNTIME_DIRS if Path(f"/{d}").is_dir() and not Path(f"/{d}").is_symlink()]
        system += prefixes
        other = [os.path.realpath(p) for p in self.sandbox_binds() if str(p) not in prefixes]
        covered = [*system, *other, *(f"/{d}" for d in RUNTIME_DIRS), self.exec_root, "/tmp"]
        unknown = [top for top in visible if top not in (SANDBOX_ROOT, "/tmp")
                   and not any(c == top or c.startswith(top + "/") for c in covered)]
        return (system if runtime else []) + other + unknown

    def own_roots(self, visible: list[str]) -> list[str]:
        """The repository and the private /tmp; unisolated, the working copy and HOME on the host."""
        return [SANDBOX_ROOT, "/tmp"] if self.isolated else [self.exec_root, str(self.base / "home")]

    def run(self, cmd: str, timeout: float | None = None, *, stdin: bytes | None = None) -> CommandResult:
        """Run ``cmd`` with ``bash -c`` in the workspace; never raises for a failing command."""
        self._check_open()
        if not self.isolated:
            cmd = to_host_paths(cmd, str(self.path))
        argv = ["bash", "-c", cmd]
        if self.isolated:
            argv = bwrap_command(argv, self.path, readonly_extra=self.sandbox_binds(), hide=hidden_paths())
        res = run_limited(
            argv,
            cwd=self.path,
            env=self.command_env(),
            limits=self.limits,
            timeout=timeout,
            stdin=stdin,
            cgroup=self.cgroup,
            on_start=self._track,
        )
        if not self.isolated:
            res.output = to_agent_paths(res.output, str(self.path))
        return res

    def crashed(self, res: CommandResult) -> bool:
        """The bubblewrap sandbox itself ended by a signal (killed from outside: OOM killer, operator);
        the agent's processes live in their own pid namespace, their signals come back as 128+N."""
        return res.returncode < 0 and not res.timed_out and self.isolated

    # ------------------------------------------------------------------------------- files
    def _host(self, rel: str) -> Path:
        return Path(os.path.realpath(self.path)) / rel

    def resolve_path(self, rel: str) -> str | None:
        root = Path(os.path.realpath(self.path))
        full = Path(os.path.realpath(root / rel))
        if full != root and root not in full.parents:
            return None
        return full.relative_to(root).as_posix()

    def path_kind(self, rel: str):
        p = self._host(rel)
        if not p.exists():
            return None
        return "dir" if p.is_dir() else "file" if p.is_file() else "other"

    def read_file(self, rel: str) -> bytes:
        return self._host(rel).read_bytes()

    def write_file(self, rel: str, data: bytes) -> None:
        p = self._host(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)

    def remove_file(self, rel: str) -> None:
        self._host(rel).unlink(missing_ok=True)

    def list_dir(self, rel: str) -> list[DirEntry]:
        return [DirEntry(e.name, e.is_dir(), e.is_symlink()) for e in sorted(self._host(rel).iterdir())]

    def walk(self, rel: str):
        root = Path(os.path.realpath(self.path))
        for dirpath, dirnames, filenames in os.walk(self._host(rel)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fn in sorted(filenames):
                if fn.startswith("."):
                    continue
                fp = Path(dirpath) / fn
                if fp.is_symlink():
                    continue
                try:
                    data = fp.read_bytes()
                except OSError:
                    continue
                yield fp.relative_to(root).as_posix(), data

    def reader(self) -> Reader:
        return tree_reader(self.path)

    def base_reader(self) -> Reader:
        return tree_reader(self.pristine)

    def host_trees(self) -> tuple[Path, Path]:
        return self.path, self.pristine

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

        Runs git on the host with the pristine snapshot's ``.git`` as git dir (read only), a
        throw-away index and a throw-away object folder: whatever the agent did to ``.git``
        (config, hooks, fsmonitor) is never executed or relied upon. Ignored files are not part
        of the patch.
        """
        self._check_open()
        scratch = Path(tempfile.mkdtemp(prefix="diff-", dir=self.base))
        try:
            shutil.copy2(self.pristine / ".git" / "index", scratch / "index")
            env = {
                "GIT_DIR": str(self.pristine / ".git"),
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
                "--no-textconv", "--full-index", self.head, env=env,
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
