"""The choice of workspace backend, and the workspace interface every consumer goes through.

The interface itself (:class:`WorkspaceBackend`, :class:`Limits`, :class:`CommandResult`,
:class:`WorkspaceError`, ...) is defined in :mod:`swetrain.env.interface`, which imports no backend,
and re-exported here; this module picks a backend by name from :data:`BACKENDS` and goes through
its class for everything: :func:`open_workspace`, :func:`preflight`, :func:`isolation_record`.

A *workspace* is one working copy of a task's repository that an agent acts in and the verifier
judges in. The tools (:mod:`swetrain.env.tools`), the verifier, the leak audit, the rollout engine,
the scripted agents and synthesis only use the methods of :class:`WorkspaceBackend`, so where the
copy lives is the backend's business:

- ``local`` (:class:`swetrain.env.workspace.Workspace`): a git working copy on the host, commands
  under bubblewrap (the default);
- ``docker`` (:class:`swetrain.env.docker_backend.DockerWorkspace`): one container of the task's
  image (``Task.environment``), the repository at the image's ``/testbed``.

A new backend is one module with a :class:`WorkspaceBackend` subclass plus one line in
:data:`BACKENDS`. Paths given to the file methods are POSIX paths *relative to the repository
root* (``"."`` is the root). :meth:`WorkspaceBackend.resolve_path` turns what an agent typed into
such a path after following symlinks, or None when it leads out of the repository.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from swetrain.env.interface import (  # noqa: F401  (the interface, re-exported for callers)
    CommandResult,
    DirEntry,
    Limits,
    Reader,
    WorkspaceBackend,
    WorkspaceError,
)
from swetrain.env.sandbox import mark_isolation_said

#: sandbox name -> "module:Class" of its :class:`WorkspaceBackend` (imported on first use, so a
#: local run never loads the Docker SDK)
BACKENDS: dict[str, str] = {
    "local": "swetrain.env.workspace:Workspace",
    "docker": "swetrain.env.docker_backend:DockerWorkspace",
}


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


def check_sandbox(sandbox: str) -> str:
    """``sandbox`` when it names a backend of :data:`BACKENDS`; ValueError otherwise."""
    if sandbox not in BACKENDS:
        raise ValueError(f"sandbox {sandbox!r} is not one of {', '.join(BACKENDS)}")
    return sandbox


def backend_class(sandbox: str | None = None) -> type[WorkspaceBackend]:
    """The :class:`WorkspaceBackend` class of ``sandbox`` (None: :func:`default_sandbox`)."""
    module, _, name = BACKENDS[check_sandbox(sandbox or default_sandbox())].partition(":")
    return getattr(importlib.import_module(module), name)


def open_workspace(
    task: Any,
    *,
    sandbox: str | None = None,
    limits: Limits | None = None,
    root: Any = None,
    isolated: bool | None = None,
    one_shot: bool = False,
) -> WorkspaceBackend:
    """A fresh workspace of ``task`` on the chosen backend (None: the default).
    ``one_shot``: it will hardly be reset (the verifier's), so docker keeps no spare container."""
    return backend_class(sandbox).open(task, limits=limits, root=root, isolated=isolated, one_shot=one_shot)


def preflight(sandbox: str, tasks: Iterable[Any]) -> None:
    """Check a run can start on ``sandbox`` before any chain runs: for ``docker`` the SDK, the
    daemon and every task's image; for ``local`` that each distinct task environment can run its
    test command (the runner imports, the verifier's plugin loads; an empty ``tasks`` checks the
    default environment, the built-in suite's). Raises ValueError / WorkspaceError with one line."""
    check_sandbox(sandbox)
    backend_class(sandbox).preflight(list(tasks))


def isolation_record(sandbox: str = "local") -> dict[str, Any]:
    """How agent commands are isolated on this machine by ``sandbox``, as recorded in a run directory."""
    return backend_class(sandbox).isolation_record()


def announce_isolation(run_dir: str | Path | None = None, sandbox: str = "local") -> dict[str, Any]:
    """Print one line (stderr) saying how agent commands are isolated; record it in
    ``run_dir/isolation.json`` when given. Every command that runs agent code calls this."""
    record = isolation_record(sandbox)
    mark_isolation_said()
    print(f"swetrain: {record['note']}", file=sys.stderr, flush=True)
    if run_dir is not None:
        path = Path(run_dir)
        path.mkdir(parents=True, exist_ok=True)
        (path / "isolation.json").write_text(json.dumps(record, indent=1) + "\n")
    return record
