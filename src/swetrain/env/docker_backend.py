"""The ``docker`` workspace backend: one container of the task's image per workspace.

The task's image (``Task.environment`` = ``docker://IMAGE``, or a bare image name) holds the
repository at ``/testbed`` (SWE-bench / SWE-Gym / SWE-smith / R2E-Gym convention, and what
``swetrain env build-image`` makes for our own tasks). The container runs ``sleep infinity`` under
Docker's init (which reaps orphans) with

- ``--network none`` (only ``lo``), all capabilities dropped, ``no-new-privileges``;
- ``--pids-limit`` = ``Limits.nproc``, ``--memory`` = ``--memory-swap`` = ``Limits.memory_bytes``,
  ``--cpus`` = ``cpus``, rlimits for CPU seconds and file size (``--ulimit``) and address space
  (``ulimit -v`` per command, as the local backend's RLIMIT_AS);
- labels (:mod:`swetrain.env.docker_client`) so a killed run's containers are removed next time.

Commands run with ``docker exec``: ``bash -c CMD`` at ``/testbed``, output merged and kept head+tail
as in the local backend, a wall timeout; every other process of the container is killed when the
command returns (by the command's wrapper, or from outside after a timeout), as the local backend
kills its process group and cgroup.

``reset()`` replaces the container by a fresh one of the same image: files everywhere (not only
``/testbed``), modes, processes and ``/tmp`` are exactly the image's. The next reset's container
is started in the background while the agent works (a *spare*: an untouched container is the
initial state), so a reset only swaps it in and removes the old one in the background
(``bench/env_bench.py`` measured the options; see docs/env.md). ``diff()`` runs git inside the container against the
commit ``HEAD`` named when the container started, with a throw-away index and object folder and
hooks/fsmonitor off. Infrastructure failures (daemon down, image missing, the container killed or
out of memory) raise :class:`~swetrain.env.interface.WorkspaceError` or make :meth:`crashed` true,
never look like a failing command.
"""

from __future__ import annotations

import io
import posixpath
import re
import shlex
import tarfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from swetrain.env.docker_client import (
    LABEL,
    OWNER_LABEL,
    DockerUnavailable,
    docker_client,
    docker_isolation_note,
    owner_id,
    register,
)
from swetrain.env.interface import (
    PYTEST_PLUGIN_DIR,
    SANDBOX_ROOT,
    CommandResult,
    DirEntry,
    Limits,
    OutputCapture,
    Reader,
    WorkspaceBackend,
    WorkspaceError,
)

IMAGE_PREFIX = "docker://"
PLUGIN_TARGET = "/opt/swetrain/pytest_plugins"  # where the verifier's pytest plugins are copied in
MAX_READ_BYTES = 256 << 20

# Kills every process but init, the keep-alive and itself (bash builtins only: works when the pids
# limit is reached).
_KILL_ALL = r"""
for _round in 1 2 3 4 5 6 7 8 9 10; do
  others=0
  for p in /proc/[0-9]*; do
    q=${p#/proc/}
    case " 1 $SWETRAIN_KEEP $$ " in *" $q "*) ;; *) others=1; kill -9 "$q" 2>/dev/null;; esac
  done
  [ "$others" = 0 ] && break
done
"""
# Runs every command: the command as a child, then _KILL_ALL. When processes outlive the ten kill
# rounds (a fork bomb refilling the pids limit), it ends its output with the run's secret mark so
# the host finishes the job (kill_all, or a restart) before the next command.
_WRAPPER = r"""
if [ -n "$SWETRAIN_STDIN" ]; then exec 0<"$SWETRAIN_STDIN"; rm -f -- "$SWETRAIN_STDIN"; fi
unset SWETRAIN_STDIN
(unset SWETRAIN_MARK; ulimit -v "$SWETRAIN_AS_KB" 2>/dev/null; exec bash -c "$1")
rc=$?""" + _KILL_ALL + """[ "$others" = 0 ] || printf '\\n%s\\n' "$SWETRAIN_MARK"
exit $rc
"""
_IMAGE_NAME = re.compile(r"^[a-z0-9][a-z0-9._/:@-]*$")


class DockerError(WorkspaceError):
    """A container could not be created or used (image missing, daemon error)."""


def task_image(task: Any) -> str:
    """The image of a task under the docker backend; one-line WorkspaceError when it has none."""
    env = (task.environment or "").strip()
    if env.startswith(IMAGE_PREFIX):
        return env[len(IMAGE_PREFIX) :]
    local = task.environment_path()
    if env and _IMAGE_NAME.match(env) and not (local is not None and local.exists()):
        return env  # a bare image name (as SWE-bench-family exports write it)
    raise DockerError(
        f"task {task.instance_id!r} has no Docker image (field 'environment' is {env or 'empty'}); "
        "build local images with `swetrain env build-image --tasks FILE --out FILE2` or use --sandbox local"
    )


def _client() -> Any:
    try:
        return docker_client()
    except DockerUnavailable as exc:
        raise DockerError(str(exc)) from None


def _docker_errors() -> tuple[type[BaseException], ...]:
    import docker.errors
    import requests

    return (docker.errors.DockerException, requests.RequestException, ConnectionError)


class DockerWorkspace(WorkspaceBackend):
    """A container of the task's image; the repository at ``root`` (``/testbed``)."""

    backend = "docker"
    isolated = True

    def __init__(self, task: Any, image: str, limits: Limits, *, cpus: float = 1.0, root: str = SANDBOX_ROOT,
                 spare: bool = True):
        self.task = task
        self.image = image
        self.limits = limits
        self.cpus = cpus
        self.root = root
        self.client = _client()
        self.container: Any = None
        self.head = ""
        self._keep = "0"
        self._plugins_in: str | None = None
        self._pristine: Any = None
        self._reset_hooks: list[Callable[[], None]] = []
        self._crash: str | None = None
        self._closed = False
        self._lock = threading.Lock()
        self.spare = spare
        self._spare: tuple[threading.Thread, dict] | None = None
        self._removals: list[threading.Thread] = []

    # ------------------------------------------------------------------------------ the backend
    @classmethod
    def open(cls, task: Any, *, limits: Limits | None = None, root: Any = None, isolated: bool | None = None,
             one_shot: bool = False) -> DockerWorkspace:
        """:meth:`create`, with no spare container when ``one_shot`` (``root`` and ``isolated`` are
        the local backend's: a container is always isolated and lives in the daemon)."""
        return cls.create(task, limits=limits, spare=not one_shot)

    @classmethod
    def preflight(cls, tasks: Sequence[Any]) -> None:
        """:func:`docker_preflight`: the daemon answers and every task's image is present."""
        docker_preflight(tasks)

    @classmethod
    def isolation_record(cls) -> dict[str, Any]:
        """A container per workspace, no network; the agent sees the task image's filesystem."""
        return {"isolated": True, "backend": "docker", "agent_root": SANDBOX_ROOT, "network": False,
                "visible": ["the task image's filesystem"], "note": docker_isolation_note()}

    # ------------------------------------------------------------------------------ creation
    @classmethod
    def create(cls, task: Any, *, limits: Limits | None = None, cpus: float = 1.0, spare: bool = True) -> DockerWorkspace:
        """``spare``: keep the next reset's container started in the background (agents reset
        between attempts; the verifier's one-shot workspaces pass False)."""
        image = task_image(task)
        ws = cls(task, image, limits or Limits(), cpus=cpus, spare=spare)
        register(ws)
        try:
            ws._start()
        except BaseException:
            ws.close()
            raise
        return ws

    def _container_config(self) -> dict[str, Any]:
        import docker.types

        lim = self.limits
        ulimits = [
            docker.types.Ulimit(name="cpu", soft=lim.cpu_s, hard=lim.cpu_s),
            docker.types.Ulimit(name="fsize", soft=lim.file_size_bytes, hard=lim.file_size_bytes),
            docker.types.Ulimit(name="core", soft=0, hard=0),
        ]
        return dict(
            command=["sleep", "infinity"],
            init=True,
            detach=True,
            network_mode="none",
            hostname="sandbox",
            working_dir=self.root,
            labels={LABEL: self.task.instance_id[:200], OWNER_LABEL: owner_id()},
            mem_limit=lim.memory_bytes,
            memswap_limit=lim.memory_bytes,
            pids_limit=lim.nproc,
            nano_cpus=int(self.cpus * 1e9),
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            ulimits=ulimits,
            environment={"SWETRAIN_SANDBOX": "docker"},
        )

    def _lookup_image(self) -> None:
        import docker.errors

        try:
            self.client.images.get(self.image)
        except docker.errors.ImageNotFound:
            raise DockerError(
                f"task {self.task.instance_id!r}: image {self.image} is not present locally; fetch it with "
                f"`docker pull {self.image}` (our own tasks: `swetrain env build-image`)"
            ) from None
        except _docker_errors() as exc:
            raise DockerError(f"task {self.task.instance_id!r}: Docker failed looking up image {self.image}: {exc}") from None

    def _start(self) -> None:
        self._lookup_image()
        self._adopt(*self._new_container())
        self._prepare_spare()

    def _new_container(self) -> tuple[Any, str, str]:
        """A started container of the image: (container, keep-alive pid, HEAD of the repository)."""
        try:
            container = self.client.containers.run(self.image, **self._container_config())
        except _docker_errors() as exc:
            raise DockerError(f"task {self.task.instance_id!r}: could not start a container of {self.image}: {exc}") from None
        try:
            rc, out, err = self._exec_raw(
                ["sh", "-c", f"cat /proc/1/task/1/children; git -C {shlex.quote(self.root)} rev-parse HEAD 2>/dev/null || true"],
                container=container,
            )
        except _docker_errors() as exc:
            rc, out, err = -1, b"", str(exc).encode()
        lines = out.decode(errors="replace").split()
        if rc != 0 or not lines:
            container.remove(force=True)
            raise DockerError(f"task {self.task.instance_id!r}: the container of {self.image} did not start "
                              f"(exit {rc}): {err.decode(errors='replace')[:300]}")
        return container, lines[0], lines[1] if len(lines) > 1 else ""

    def _adopt(self, container: Any, keep: str, head: str) -> None:
        self.container, self._keep, self.head = container, keep, head
        self._crash = None
        self._plugins_in = None

    def _prepare_spare(self) -> None:
        """Start the next reset's container now, in the background (an untouched container of the
        image is the exact initial state, so reset only swaps it in)."""
        if not self.spare or self._closed:
            return
        box: dict[str, Any] = {}

        def make() -> None:
            try:
                box["made"] = self._new_container()
            except BaseException as exc:  # noqa: BLE001 - reset makes one itself then
                box["error"] = exc

        thread = threading.Thread(target=make, daemon=True)
        thread.start()
        self._spare = (thread, box)

    def _take_spare(self) -> tuple[Any, str, str] | None:
        if self._spare is None:
            return None
        thread, box = self._spare
        self._spare = None
        thread.join()
        return box.get("made")

    def _remove_later(self, container: Any) -> None:
        def remove() -> None:
            try:
                container.remove(force=True)
            except Exception:  # noqa: BLE001 - gone already
                pass

        thread = threading.Thread(target=remove, daemon=True)
        thread.start()
        self._removals.append(thread)

    # ------------------------------------------------------------------------------ low level
    def _check_open(self) -> None:
        if self._closed:
            raise WorkspaceError(f"docker workspace of {self.task.instance_id} is closed")

    def _exec_raw(self, argv: list[str], *, workdir: str | None = None, container: Any = None) -> tuple[int, bytes, bytes]:
        """Run argv to completion, stdout and stderr apart and not cut (file operations, git)."""
        api = self.client.api
        ex = api.exec_create((container or self.container).id, argv, stdout=True, stderr=True, workdir=workdir or "/")
        out, err = api.exec_start(ex["Id"], demux=True)
        rc = api.exec_inspect(ex["Id"]).get("ExitCode")
        return (-1 if rc is None else int(rc)), out or b"", err or b""

    def _sh(self, script: str, *args: str) -> tuple[int, bytes, bytes]:
        try:
            return self._exec_raw(["sh", "-c", script, "sh", *args])
        except _docker_errors() as exc:
            raise OSError(f"docker exec failed: {self._why_dead() or exc}") from None

    def _why_dead(self) -> str | None:
        """Why the container is not running (None when it runs)."""
        try:
            self.container.reload()
            state = self.container.attrs.get("State", {})
        except Exception as exc:  # noqa: BLE001 - the daemon itself is gone
            return f"the Docker daemon stopped answering ({type(exc).__name__})"
        if state.get("Running"):
            return None
        if state.get("OOMKilled"):
            return "the container was killed: out of memory (OOM)"
        return f"the container stopped (exit {state.get('ExitCode')}, {state.get('Error') or 'killed from outside'})"

    # ------------------------------------------------------------------------------ commands
    @property
    def agent_root(self) -> str:
        return self.root

    def run(self, cmd: str, timeout: float | None = None, *, stdin: bytes | None = None) -> CommandResult:
        self._check_open()
        timeout = self.limits.timeout_s if timeout is None else timeout
        start = time.monotonic()
        mark = f"[swetrain-leftover-{uuid.uuid4().hex}]"
        env = {"SWETRAIN_KEEP": self._keep, "SWETRAIN_MARK": mark, "SWETRAIN_AS_KB": str(self.limits.memory_bytes // 1024), "HOME": "/root", "TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat",
               "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
               "PYTHONHASHSEED": "0", "PIP_NO_INPUT": "1"}  # fixed str hash: one action, one observation
        try:
            if stdin is not None:
                name = f"/tmp/.swetrain-stdin-{uuid.uuid4().hex[:12]}"
                self._put_file(name, stdin, 0o600)
                env["SWETRAIN_STDIN"] = name
            api = self.client.api
            ex = api.exec_create(self.container.id, ["bash", "-c", _WRAPPER, "swetrain", cmd], stdout=True,
                                 stderr=True, workdir=self.root, environment=env)
            stream = api.exec_start(ex["Id"], stream=True)
        except _docker_errors() as exc:
            return self._infra_result(str(exc), start)
        cap = OutputCapture(self.limits.output_head_chars, self.limits.output_tail_chars)
        broken: list[BaseException] = []

        def pump() -> None:
            try:
                for chunk in stream:
                    cap.feed(chunk)
            except Exception as exc:  # noqa: BLE001 - reported below
                broken.append(exc)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        reader.join(timeout)
        timed_out = reader.is_alive()
        if timed_out:
            self.kill_all()
            reader.join(10)
        try:
            rc = api.exec_inspect(ex["Id"]).get("ExitCode")
        except _docker_errors():
            rc = None
        text, truncated = cap.text()
        if mark in text:  # the wrapper could not kill everything the command left (survivors may write after it)
            text = text.replace(f"\n{mark}\n", "", 1)
            self.kill_all()
        if timed_out:
            return CommandResult(returncode=124, output=text + f"\n[command timed out after {timeout:g}s and was killed]",
                                 timed_out=True, truncated=truncated, duration_s=time.monotonic() - start)
        if rc is None or rc >= 128 or broken:
            why = self._why_dead()
            for _ in range(10):  # the daemon marks a killed container stopped a moment after its execs end
                if why is not None:
                    break
                time.sleep(0.1)
                why = self._why_dead()
            if why is not None:
                self._crash = why
                return CommandResult(returncode=-9, output=text + f"\n[{why}]", truncated=truncated,
                                     duration_s=time.monotonic() - start)
            if rc is not None and rc >= 128:
                self.kill_all()  # the wrapper itself was killed: its command may have left processes
        return CommandResult(returncode=-1 if rc is None else int(rc), output=text, truncated=truncated,
                             duration_s=time.monotonic() - start)

    def _infra_result(self, error: str, start: float) -> CommandResult:
        self._crash = self._why_dead() or f"docker exec failed: {error[:300]}"
        return CommandResult(returncode=-9, output=f"[{self._crash}]", duration_s=time.monotonic() - start)

    def crashed(self, res: CommandResult) -> bool:
        return res.returncode < 0 and not res.timed_out and self._crash is not None

    def crash_reason(self, res: CommandResult) -> str:
        return self._crash or "the container was killed"

    def kill_all(self) -> None:
        """Kill every process of the container but its init and keep-alive; restart it when even
        that cannot run (pids limit reached)."""
        if self.container is None:
            return
        try:
            api = self.client.api
            ex = api.exec_create(self.container.id, ["bash", "-c", _KILL_ALL], environment={"SWETRAIN_KEEP": self._keep})
            api.exec_start(ex["Id"])
            rc = api.exec_inspect(ex["Id"]).get("ExitCode")
            if rc == 0:
                return
        except Exception:  # noqa: BLE001
            pass
        try:  # a restart kills every process and keeps the files
            self.container.restart(timeout=0)
            rc, out, _ = self._exec_raw(["cat", "/proc/1/task/1/children"])
            self._keep = out.decode().split()[0] if rc == 0 and out.split() else self._keep  # files survive a restart
        except Exception:  # noqa: BLE001 - reported by the next command
            pass

    # ------------------------------------------------------------------------------ state
    def add_reset_hook(self, hook: Callable[[], None]) -> None:
        self._reset_hooks.append(hook)

    def reset(self) -> int:
        """A fresh container of the image (the exact initial state everywhere): the spare started
        in the background when there is one, else a new one; the old one is removed in the
        background. Returns 1."""
        self._check_open()
        old = self.container
        self.container = None
        if old is not None:
            self._remove_later(old)
        made = self._take_spare()
        self._adopt(*(made or self._new_container()))
        self._prepare_spare()
        for hook in self._reset_hooks:
            hook()
        return 1

    def diff(self) -> str:
        self._check_open()
        if not self.head:
            raise WorkspaceError(f"task {self.task.instance_id!r}: {self.root} in {self.image} is not a git repository")
        script = (
            't=$(mktemp -d) && export GIT_INDEX_FILE="$t/index" GIT_OBJECT_DIRECTORY="$t/objects" '
            'GIT_ALTERNATE_OBJECT_DIRECTORIES="$PWD/.git/objects" && mkdir "$t/objects" && '
            'o="-c core.hooksPath=/dev/null -c core.fsmonitor=false -c safe.directory=*" && '
            'git $o read-tree "$1" && git $o add -A -- . && '
            'git $o diff --cached --binary --no-color --no-ext-diff --no-textconv --full-index "$1"; '
            'rc=$?; rm -rf "$t"; exit $rc'
        )
        try:
            rc, out, err = self._exec_raw(["sh", "-c", script, "sh", self.head], workdir=self.root)
        except _docker_errors() as exc:
            raise WorkspaceError(f"diff failed: {self._why_dead() or exc}") from None
        if rc != 0:
            raise WorkspaceError(f"git diff in the container failed (exit {rc}): {err.decode(errors='replace')[:400]}")
        return out.decode("utf-8", errors="surrogateescape")

    # ------------------------------------------------------------------------------ files
    def _abs(self, rel: str) -> str:
        return posixpath.normpath(posixpath.join(self.root, rel))

    def resolve_path(self, rel: str) -> str | None:
        rc, out, err = self._sh('realpath -m -- "$1"', posixpath.join(self.root, rel))
        if rc != 0:
            raise OSError(err.decode(errors="replace").strip() or f"realpath failed on {rel}")
        real = out.decode("utf-8", errors="surrogateescape").rstrip("\n")
        root = self.root.rstrip("/") or "/"
        if real == root:
            return "."
        if not real.startswith(root + "/"):
            return None
        return real[len(root) + 1 :]

    def path_kind(self, rel: str):
        rc, out, _ = self._sh('if [ -d "$1" ]; then echo dir; elif [ -f "$1" ]; then echo file; '
                              'elif [ -e "$1" ]; then echo other; fi', self._abs(rel))
        kind = out.decode().strip()
        return kind or None

    def read_file(self, rel: str) -> bytes:
        return self._read(self.container, self._abs(rel), follow=False)

    def _read(self, container: Any, path: str, *, follow: bool, depth: int = 0) -> bytes:
        """A regular file's bytes out of ``container`` (through symlinks inside the root when
        ``follow``; ValueError for one leading out)."""
        import docker.errors

        try:
            bits, _stat = container.get_archive(path)
            with tarfile.open(fileobj=_ChunkReader(bits), mode="r|") as tar:
                for member in tar:
                    if member.issym() and follow and depth < 8:
                        target = posixpath.normpath(posixpath.join(posixpath.dirname(path), member.linkname))
                        if target != self.root and not target.startswith(self.root + "/"):
                            raise ValueError(f"{path} leads out of the repository")
                        return self._read(container, target, follow=True, depth=depth + 1)
                    if member.isdir():
                        raise IsADirectoryError(path)
                    if not member.isfile():
                        raise OSError(f"{path} is not a regular file")
                    if member.size > MAX_READ_BYTES:
                        raise OSError(f"{path} is larger than {MAX_READ_BYTES} bytes")
                    fh = tar.extractfile(member)
                    return fh.read() if fh is not None else b""
        except docker.errors.NotFound:
            raise FileNotFoundError(path) from None
        except (docker.errors.APIError, tarfile.TarError) as exc:
            raise OSError(f"reading {path} from the container failed: {exc}") from None
        raise FileNotFoundError(path)

    def _put_file(self, path: str, data: bytes, mode: int) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo(posixpath.basename(path))
            info.size, info.mode, info.mtime = len(data), mode, int(time.time())
            tar.addfile(info, io.BytesIO(data))
        if not self.container.put_archive(posixpath.dirname(path), buf.getvalue()):
            raise OSError(f"writing {path} into the container failed")

    def write_file(self, rel: str, data: bytes) -> None:
        path = self._abs(rel)
        rc, out, err = self._sh('mkdir -p -- "$(dirname -- "$1")" && { stat -c %a -- "$1" 2>/dev/null || echo 644; }', path)
        if rc != 0:
            raise OSError(err.decode(errors="replace").strip() or f"cannot create the folder of {rel}")
        try:
            mode = int(out.decode().split()[0], 8)
        except (ValueError, IndexError):
            mode = 0o644
        self._put_file(path, data, mode)

    def remove_file(self, rel: str) -> None:
        self._sh('rm -f -- "$1"', self._abs(rel))

    def list_dir(self, rel: str) -> list[DirEntry]:
        rc, out, err = self._sh("find \"$1\" -mindepth 1 -maxdepth 1 -printf '%y%Y%f\\0'", self._abs(rel))
        if rc != 0:
            raise OSError(err.decode(errors="replace").strip() or f"cannot list {rel}")
        entries = []
        for item in out.split(b"\0"):
            if len(item) < 3:
                continue
            kind, target, name = chr(item[0]), chr(item[1]), item[2:].decode("utf-8", errors="surrogateescape")
            entries.append(DirEntry(name, target == "d", kind == "l"))
        return sorted(entries, key=lambda e: e.name)

    def walk(self, rel: str) -> Iterator[tuple[str, bytes]]:
        import docker.errors

        base = self._abs(rel)
        try:
            bits, _ = self.container.get_archive(base + "/.")
        except docker.errors.NotFound:
            return
        found: list[tuple[tuple, str, bytes]] = []
        with tarfile.open(fileobj=_ChunkReader(bits), mode="r|") as tar:
            for member in tar:
                parts = [p for p in member.name.split("/") if p not in ("", ".")]
                if not parts or not member.isfile() or any(p.startswith(".") for p in parts):
                    continue
                fh = tar.extractfile(member)
                data = fh.read() if fh is not None else b""
                path = "/".join(parts) if rel == "." else f"{rel}/{'/'.join(parts)}"
                key = tuple((1, p) for p in parts[:-1]) + ((0, parts[-1]),)
                found.append((key, path, data))
        for _key, path, data in sorted(found, key=lambda f: f[0]):
            yield path, data

    def reader(self) -> Reader:
        return self._reader_of(lambda: self.container)

    def base_reader(self) -> Reader:
        def pristine() -> Any:
            if self._pristine is None:  # created, never started: the image's files as they are
                self._pristine = self.client.containers.create(
                    self.image, command=["true"], network_disabled=True,
                    labels={LABEL: self.task.instance_id[:200], OWNER_LABEL: owner_id()},
                )
            return self._pristine

        return self._reader_of(pristine)

    def _reader_of(self, container: Callable[[], Any]) -> Reader:
        def read(path: str) -> str | None:
            try:
                data = self._read(container(), self._abs(path), follow=True)
            except (FileNotFoundError, IsADirectoryError):
                return None
            except OSError:
                return None
            return data.decode("utf-8", errors="replace")

        return read

    def pytest_plugin_dir(self) -> str:
        """Copy swetrain's pytest plugins into the container once; where they are."""
        if self._plugins_in != self.container.id:
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w") as tar:
                for f in sorted(Path(PYTEST_PLUGIN_DIR).glob("*.py")):
                    tar.add(str(f), arcname=f"{PLUGIN_TARGET.lstrip('/')}/{f.name}")
            self.container.put_archive("/", buf.getvalue())
            self._plugins_in = self.container.id
        return PLUGIN_TARGET

    # ------------------------------------------------------------------------------ lifetime
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        spare = self._take_spare()
        if spare is not None:
            self._remove_later(spare[0])
        for c in (self.container, self._pristine):
            if c is not None:
                try:
                    c.remove(force=True)
                except Exception:  # noqa: BLE001 - gone already, or the daemon is down
                    pass
        self.container = None
        self._pristine = None
        for thread in self._removals:
            thread.join(60)
        self._removals.clear()

    def __del__(self) -> None:
        try:
            if not self._closed:
                self.close()
        except Exception:  # noqa: BLE001
            pass

    def __repr__(self) -> str:
        cid = self.container.short_id if self.container is not None else None
        return f"DockerWorkspace({self.task.instance_id!r}, image={self.image!r}, container={cid})"


class _ChunkReader(io.RawIOBase):
    """A file object over the byte chunks ``get_archive`` streams (tarfile reads it in stream mode)."""

    def __init__(self, chunks: Any):
        self._it = iter(chunks)
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._buf:
            try:
                self._buf = next(self._it)
            except StopIteration:
                return 0
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def docker_preflight(tasks: Sequence[Any]) -> None:
    """Before a run on the docker sandbox: the daemon answers and every task's image is present.
    Raises DockerError with one line naming the first problem (which task, which image, the pull)."""
    import docker.errors

    client = _client()
    seen: set[str] = set()
    for task in tasks:
        image = task_image(task)
        if image in seen:
            continue
        try:
            client.images.get(image)
        except docker.errors.ImageNotFound:
            raise DockerError(
                f"task {task.instance_id!r}: image {image} is not present locally; fetch it with "
                f"`docker pull {image}` (our own tasks: `swetrain env build-image`)"
            ) from None
        seen.add(image)
