"""The choice of workspace backend, and the workspace interface every consumer goes through.

The interface itself (:class:`WorkspaceBackend`, :class:`Limits`, :class:`CommandResult`,
:class:`WorkspaceError`, ...) is defined in :mod:`swetrain.env.interface`, which imports no backend,
and re-exported here; this module picks and opens a backend (:func:`open_workspace`, :func:`preflight`).

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

import os
from pathlib import Path
from collections.abc import Callable
from typing import Any, Literal

from swetrain.env.interface import (  # noqa: F401  (the interface, re-exported for callers)
    CommandResult,
    DirEntry,
    Limits,
    Reader,
    WorkspaceBackend,
    WorkspaceError,
)

SANDBOXES = ("local", "docker")
Sandbox = Literal["local", "docker"]


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
    from swetrain.env.workspace import PYTEST_PLUGIN_DIR

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
