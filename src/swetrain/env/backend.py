"""The workspace interface every consumer goes through, and the choice of backend.

A *workspace* is one working copy of a task's repository that an agent acts in and the verifier
judges in. The tools (:mod:`swetrain.env.tools`), the verifier, the rollout engine, the scripted
agents and synthesis only use the methods of :class:`WorkspaceBackend`, so where the copy lives
is the backend's business:

- ``local`` (:class:`swetrain.env.workspace.Workspace`): a git working copy on the host, commands
  under bubblewrap (the default);
- ``docker`` (:class:`swetrain.env.docker_backend.DockerWorkspace`): one container of the task's
  image (``Task.environment``), the repository at the image's ``/testbed``.

Paths given to the file methods are POSIX paths *relative to the repository root* (``"."`` is the
root). :meth:`WorkspaceBackend.resolve_path` turns what an agent typed into such a path after
following symlinks, or None when it leads out of the repository.
"""

from __future__ import annotations

import abc
import os
from pathlib import Path
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from swetrain.env.sandbox import CommandResult, Limits

SANDBOXES = ("local", "docker")
Sandbox = Literal["local", "docker"]
Reader = Callable[[str], "str | None"]


@dataclass(frozen=True)
class DirEntry:
    """One entry of :meth:`WorkspaceBackend.list_dir`."""

    name: str
    is_dir: bool  # a folder, or a symlink to one
    is_link: bool


class WorkspaceBackend(abc.ABC):
    """What a workspace offers, whichever backend holds it."""

    backend: str = ""
    task: Any
    limits: Limits
    isolated: bool

    @property
    @abc.abstractmethod
    def agent_root(self) -> str:
        """The repository root as the agent sees it (``/testbed``)."""

    # ------------------------------------------------------------------ commands and state
    @abc.abstractmethod
    def run(self, cmd: str, timeout: float | None = None, *, stdin: bytes | None = None) -> CommandResult:
        """Run ``cmd`` with ``bash -c`` at the repository root; never raises for a failing command."""

    @abc.abstractmethod
    def reset(self) -> int:
        """Restore the task's exact initial state (files, modes, processes); run reset hooks."""

    @abc.abstractmethod
    def diff(self) -> str:
        """``git diff --binary`` of the working copy against the task's base state."""

    @abc.abstractmethod
    def add_reset_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` on every reset."""

    @abc.abstractmethod
    def close(self) -> None:
        """Kill every process and remove the working copy; idempotent."""

    def crashed(self, res: CommandResult) -> bool:
        """The sandbox itself was killed from outside while ``res``'s command ran (infra, not the agent)."""
        return False

    # ------------------------------------------------------------------ files (relative paths)
    @abc.abstractmethod
    def resolve_path(self, rel: str) -> str | None:
        """``rel`` with symlinks followed, relative to the root (``"."`` = root); None when it leaves it."""

    @abc.abstractmethod
    def path_kind(self, rel: str) -> Literal["file", "dir", "other"] | None:
        """What ``rel`` is (symlinks followed); None when it does not exist."""

    @abc.abstractmethod
    def read_file(self, rel: str) -> bytes:
        """The bytes of a file; OSError when it cannot be read."""

    @abc.abstractmethod
    def write_file(self, rel: str, data: bytes) -> None:
        """Write a file (parents created; an existing file keeps its mode)."""

    @abc.abstractmethod
    def remove_file(self, rel: str) -> None:
        """Delete a file if it exists."""

    @abc.abstractmethod
    def list_dir(self, rel: str) -> list[DirEntry]:
        """The entries of a folder, sorted by name."""

    @abc.abstractmethod
    def walk(self, rel: str) -> Iterator[tuple[str, bytes]]:
        """``(path, content)`` of every regular, non-symlink file under ``rel`` whose path has no
        hidden (dot) component below ``rel``, in sorted walk order."""

    @abc.abstractmethod
    def reader(self) -> Reader:
        """Read the current tree's text files (None when absent); ValueError for a path leading out
        (``swetrain.env.protect`` reads pytest configuration through it)."""

    @abc.abstractmethod
    def base_reader(self) -> Reader:
        """The same over the task's initial state."""

    # ------------------------------------------------------------------ lifetime
    def __enter__(self) -> WorkspaceBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_DEFAULT: list[str] = []


def default_sandbox() -> str:
    """The process's sandbox when a caller names none: set by ``--sandbox`` of eval/train/quickstart
    (:func:`set_default_sandbox`), else ``$SWETRAIN_SANDBOX``, else ``local``."""
    if _DEFAULT:
        return _DEFAULT[-1]
    return check_sandbox(os.environ.get("SWETRAIN_SANDBOX", "").strip() or "local")


def set_default_sandbox(sandbox: str) -> None:
    """Make ``sandbox`` the default of this process and of processes it starts (Ray actors)."""
    check_sandbox(sandbox)
    _DEFAULT.append(sandbox)
    os.environ["SWETRAIN_SANDBOX"] = sandbox


def open_workspace(
    task: Any,
    *,
    sandbox: str | None = None,
    limits: Limits | None = None,
    root: Any = None,
    isolated: bool | None = None,
    one_shot: bool = False,
) -> WorkspaceBackend:
    """A fresh workspace of ``task`` on the chosen backend (``local`` or ``docker``; None: the default).
    ``one_shot``: it will hardly be reset (the verifier's), so docker keeps no spare container."""
    sandbox = check_sandbox(sandbox or default_sandbox())
    if sandbox == "docker":
        from swetrain.env.docker_backend import DockerWorkspace

        return DockerWorkspace.create(task, limits=limits, spare=not one_shot)
    from swetrain.env.workspace import Workspace

    return Workspace.create(task, root=root, limits=limits, isolated=isolated)


def workspace_factory(sandbox: str | None = None, **kwargs: Any) -> Callable[[Any], WorkspaceBackend]:
    """``task -> workspace`` on ``sandbox`` (picklable: Ray actors receive it)."""
    sandbox = check_sandbox(sandbox or default_sandbox())
    return _Factory(sandbox, kwargs)


class _Factory:
    def __init__(self, sandbox: str, kwargs: dict[str, Any]):
        self.sandbox = sandbox
        self.kwargs = kwargs

    def __call__(self, task: Any) -> WorkspaceBackend:
        return open_workspace(task, sandbox=self.sandbox, **self.kwargs)

    def __repr__(self) -> str:
        return f"workspace_factory({self.sandbox!r})"


def check_sandbox(sandbox: str) -> str:
    if sandbox not in SANDBOXES:
        raise ValueError(f"sandbox {sandbox!r} is not one of {', '.join(SANDBOXES)}")
    return sandbox


def preflight(sandbox: str, tasks: Any) -> None:
    """Check a run can start on ``sandbox`` before any chain runs: for ``docker`` the SDK, the
    daemon and every task's image; for ``local`` that each distinct task environment can run its
    test command (the runner imports, the verifier's plugin loads; an empty ``tasks`` checks the
    default environment, the built-in suite's). Raises ValueError / WorkspaceError with one line."""
    check_sandbox(sandbox)
    tasks = list(tasks)
    if sandbox == "docker":
        from swetrain.env.docker_backend import docker_preflight

        docker_preflight(tasks)
        return
    local_preflight(tasks)


def local_preflight(tasks: list) -> None:
    """Each distinct environment of ``tasks`` (the default one when a task names none) can run tests."""
    from swetrain.env.taskenv import TaskEnvError, check_environment, default_task_env
    from swetrain.env.workspace import PYTEST_PLUGIN_DIR, WorkspaceError

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
