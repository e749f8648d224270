"""The workspace interface, with no backend behind it: what every backend implements and returns.

:class:`WorkspaceBackend` (the methods consumers use), the values its methods take and give
(:class:`Limits`, :class:`CommandResult`, :class:`DirEntry`, :data:`Reader`), the error of a
workspace that cannot be created or used (:class:`WorkspaceError`), how a command's output is
kept head+tail (:class:`OutputCapture`), where the repository appears inside every sandbox
(:data:`SANDBOX_ROOT`) and swetrain's pytest plugins on the host (:data:`PYTEST_PLUGIN_DIR`).
The backends (:mod:`swetrain.env.workspace`, :mod:`swetrain.env.docker_backend`) import this
module; it imports none of them. The choice of backend (``open_workspace``, ``preflight``, the
isolation record) is :mod:`swetrain.env.backend`: a new backend is one module with a subclass of
:class:`WorkspaceBackend` plus one line in its ``BACKENDS`` map.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

Reader = Callable[[str], "str | None"]

#: where the repository appears inside the sandbox, on every backend (R2E-Gym/SWE-bench convention)
SANDBOX_ROOT = "/testbed"
#: swetrain's pytest plugins (the verifier's trusted runner, the hang guard) on the host; each
#: backend makes them visible inside its sandbox (:meth:`WorkspaceBackend.pytest_plugin_dir`)
PYTEST_PLUGIN_DIR = Path(__file__).resolve().parent / "pytest_plugins"


class WorkspaceError(RuntimeError):
    """A workspace could not be created or used; the message names the task and the cause."""


#: the default wall-clock limit of one command in a workspace (an agent's test run included)
COMMAND_TIMEOUT_S = 120.0
#: the verifier's default per-test limit: a test that runs longer FAILS, saying it hung
TEST_TIMEOUT_S = 60.0


class Limits(BaseModel):
    """Resource limits of one command (all per command)."""

    timeout_s: float = Field(default=COMMAND_TIMEOUT_S, gt=0, description="wall-clock limit")
    cpu_s: int = Field(default=600, gt=0, description="RLIMIT_CPU seconds per process")
    memory_bytes: int = Field(default=8 << 30, gt=0, description="RLIMIT_AS bytes per process")
    file_size_bytes: int = Field(default=512 << 20, gt=0, description="RLIMIT_FSIZE: largest file a command may write")
    nproc: int = Field(default=512, gt=0, description="processes/threads at once (pids cgroup or RLIMIT_NPROC)")
    output_head_chars: int = Field(default=8000, ge=0, description="output kept from the start")
    output_tail_chars: int = Field(default=8000, ge=0, description="output kept from the end")


class CommandResult(BaseModel):
    """What one command did. ``output`` is stdout+stderr merged, cut head+tail when too long."""

    returncode: int
    output: str
    timed_out: bool = False
    truncated: bool = False
    duration_s: float = 0.0


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

    # ------------------------------------------------------------------ the backend (class level)
    @classmethod
    @abc.abstractmethod
    def open(cls, task: Any, *, limits: Limits | None = None, root: Any = None, isolated: bool | None = None,
             one_shot: bool = False) -> WorkspaceBackend:
        """A fresh workspace of ``task``. ``root`` (a host folder for the copy) and ``isolated``
        (None: isolate when possible; True: require it) are the local backend's, ignored by
        backends without them; ``one_shot``: it will hardly be reset (the verifier's)."""

    @classmethod
    @abc.abstractmethod
    def preflight(cls, tasks: Sequence[Any]) -> None:
        """Check a run of ``tasks`` can start on this backend (an empty list: the default task
        environment); raise ValueError / WorkspaceError with one line naming the problem."""

    @classmethod
    @abc.abstractmethod
    def isolation_record(cls) -> dict[str, Any]:
        """How this backend isolates agent commands on this machine (``isolated``, ``backend``,
        ``agent_root``, ``network``, ``visible``, ``note``: one line for logs), as a run records it."""

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

    def crash_reason(self, res: CommandResult) -> str:
        """Why the sandbox ended under ``res``'s command, when :meth:`crashed` says it did."""
        return f"the sandbox was killed (signal {-res.returncode})"

    @abc.abstractmethod
    def pytest_plugin_dir(self) -> str:
        """Where commands of this workspace see swetrain's pytest plugins (put it on ``PYTHONPATH``)."""

    # ------------------------------------------------------------------ what the sandbox shows
    def shared_roots(self, visible: list[str], *, runtime: bool = True) -> list[str]:
        """Folders the sandbox shows that are not the task's own but the same in every workspace
        of this backend here (system runtime, interpreter, bound folders), as commands see them;
        ``visible``: the sandbox's top-level folders. The leak audit scans them once for all
        tasks; ``runtime=False`` leaves out the system runtime and the interpreter. None by
        default: everything the sandbox shows is the task's own."""
        return []

    def own_roots(self, visible: list[str]) -> list[str]:
        """The task's own folders as commands see them (what the leak audit scans with this task's
        answer); by default every top-level folder the sandbox shows."""
        return list(visible)

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

    def host_trees(self) -> tuple[Path, Path] | None:
        """The working copy and the task's pristine initial tree as folders on this host, when the
        backend keeps them here (the verifier's hardening then compares and opens files directly);
        None (the default) when only commands and the file methods above reach them."""
        return None

    # ------------------------------------------------------------------ lifetime
    def __enter__(self) -> WorkspaceBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class OutputCapture:
    """The output of one command as the backends keep it: the first ``head_limit`` and the last
    ``tail_limit`` bytes, with a marker saying how much was cut between them (:meth:`text`)."""

    head_limit: int
    tail_limit: int
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def feed(self, data: bytes) -> None:
        """Take the next chunk of output."""
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data and self.tail_limit > 0:
            self.tail += data
            if len(self.tail) > 2 * self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    def text(self) -> tuple[str, bool]:
        """The kept output as text (undecodable bytes replaced) and whether some was cut."""
        tail = bytes(self.tail[-self.tail_limit :]) if self.tail_limit > 0 else b""
        kept = len(self.head) + len(tail)
        head = bytes(self.head).decode("utf-8", errors="replace")
        if self.total <= kept:
            return head + tail.decode("utf-8", errors="replace"), False
        cut = self.total - kept
        marker = f"\n\n[... {cut} bytes of output truncated (kept first {len(self.head)} and last {len(tail)}) ...]\n\n"
        return head + marker + tail.decode("utf-8", errors="replace"), True
