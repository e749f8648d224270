"""Run one shell command under limits, optionally inside a bubblewrap sandbox.

Every command gets:
- its own session/process group (``start_new_session``), killed as a whole when the command returns,
  so background processes never outlive the command that started them;
- rlimits for CPU seconds, address space, file size (and process count where the kernel enforces
  it: not for root, see ``PidsCgroup``);
- a wall timeout;
- output (stdout+stderr merged) read as a stream and kept as head+tail, so infinite output cannot
  exhaust memory; the cut is marked in the text;
- when ``bwrap`` works: a fresh mount namespace that shows only the system runtime read-only
  (``RUNTIME_DIRS``) plus what the command needs (interpreter, task environment), a private tmpfs
  ``/tmp``, the workspace bound read-write at ``/testbed``, no network
  (``--unshare-net``), its own pid namespace (every process dies with the command) and all
  capabilities dropped.
"""

from __future__ import annotations

import functools
import os
import re
import resource
import selectors
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

from swetrain.env.interface import SANDBOX_ROOT, CommandResult, Limits, OutputCapture
MARKER_VAR = "SWETRAIN_WORKSPACE_ID"  # every command carries it; lets reset find escaped processes


# --------------------------------------------------------------------------------------------
# isolation probe


@functools.lru_cache(maxsize=1)
def bwrap_available() -> bool:
    """True when ``bwrap`` exists and can create the namespaces we use (probed once)."""
    if os.environ.get("SWETRAIN_NO_BWRAP"):
        return False
    exe = shutil.which("bwrap")
    if not exe:
        return False
    try:
        proc = subprocess.run(
            [exe, *_bwrap_root_args(), "--unshare-net", "--unshare-pid", "--die-with-parent", "true"],
            capture_output=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def isolation_note() -> str:
    """One line saying whether commands are isolated, for logs and ``env selfcheck``."""
    if bwrap_available():
        return ("isolated: bubblewrap sandbox (no network; sees the repository at /testbed, a private /tmp and "
                "the system runtime read-only, not the host's home, caches or task files)")
    return (
        "NOT isolated: bubblewrap (bwrap) is unavailable, commands run as plain processes with rlimits "
        "and a process group only; install the 'bubblewrap' package for network and filesystem isolation"
    )


# The system runtime a command may read: programs, libraries, configuration. Nothing else of the
# host is visible (no /root, /home, /work, /opt, /var, /srv, /mnt): not the user's home, swetrain's
# cache, tasks files or the project's sources. What a command needs beyond this (the interpreter's
# prefix, the task environment, the verifier's pytest plugins) is bound explicitly.
RUNTIME_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")


_SAID = threading.Event()  # the isolation line was printed in this process


def warn_unisolated_once() -> None:
    """Say once per process, where nothing said it yet, that agent commands run unisolated."""
    if not _SAID.is_set():
        _SAID.set()
        import logging

        logging.getLogger("swetrain.env").warning("swetrain: %s", isolation_note())


def mark_isolation_said() -> None:
    """Note that this process has said how commands are isolated (the backend's announcement):
    :func:`warn_unisolated_once` stays quiet."""
    _SAID.set()


def _bwrap_root_args() -> list[str]:
    """Bind the system runtime read-only; fresh /proc, /dev and a private tmpfs /tmp."""
    args: list[str] = []
    for name in RUNTIME_DIRS:
        src = "/" + name
        if os.path.islink(src):
            args += ["--symlink", os.readlink(src), src]
        elif os.path.isdir(src):
            args += ["--ro-bind", src, src]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    return args


def _within(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def runtime_roots() -> list[Path]:
    """The host folders ``_bwrap_root_args`` binds (symlinks resolved)."""
    return [Path(os.path.realpath("/" + n)) for n in RUNTIME_DIRS if os.path.isdir("/" + n)]


def hidden_paths() -> list[Path]:
    """Host folders no sandboxed command may read even if they lie inside a bound folder:
    swetrain's own package (its data holds the built-in suite's fixed sources and gold patches)
    and swetrain's home (snapshots, caches)."""
    from swetrain.paths import swetrain_home

    return [Path(__file__).resolve().parents[1], Path(os.path.realpath(swetrain_home()))]


def bwrap_command(
    argv: Sequence[str],
    workspace: Path,
    *,
    readonly_extra: Iterable[Path] = (),
    hide: Iterable[Path] = (),
    cwd: str = SANDBOX_ROOT,
) -> list[str]:
    """Wrap ``argv`` so it runs with the workspace at /testbed and nothing else writable.

    The sandbox sees the system runtime (``RUNTIME_DIRS``), ``readonly_extra`` (the interpreter's
    prefix, the task environment, the pytest plugin folder) read-only at their host paths, a
    private ``/tmp`` and the workspace at ``/testbed``. Each ``hide`` path that lies inside a
    bound folder is covered by an empty tmpfs; an extra path inside a hidden one is bound again
    on top (the verifier's plugin folder inside an installed swetrain package).
    """
    args = ["bwrap", "--die-with-parent", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    args += ["--hostname", "sandbox"]
    if os.geteuid() == 0:
        args += ["--cap-drop", "ALL"]
    args += _bwrap_root_args()
    bound = runtime_roots()
    extras: list[Path] = []
    for extra in readonly_extra:
        extra = Path(os.path.realpath(extra))
        if extra.exists() and extra not in extras:
            extras.append(extra)
    hidden = [Path(os.path.realpath(h)) for h in hide]
    late = [e for e in extras if _within(e, hidden)]
    for extra in extras:
        if extra not in late and not _within(extra, bound):
            args += ["--ro-bind", str(extra), str(extra)]
            bound.append(extra)
    for h in hidden:
        if h.is_dir() and _within(h, bound):
            args += ["--tmpfs", str(h)]
    for extra in late:
        args += ["--ro-bind", str(extra), str(extra)]
    args += ["--bind", str(workspace), SANDBOX_ROOT, "--chdir", cwd, "--"]
    return args + list(argv)


_TESTBED = re.compile(r"(?<![\w.~/-])" + re.escape(SANDBOX_ROOT) + r"(?![\w.-])")


def to_host_paths(text: str, host_root: str) -> str:
    """``/testbed`` in a command to the workspace's host path (unisolated commands only)."""
    return _TESTBED.sub(lambda _m: host_root, text)


def to_agent_paths(text: str, host_root: str) -> str:
    """The workspace's host path in output back to ``/testbed`` (unisolated commands only)."""
    real = os.path.realpath(host_root)
    for root in sorted({host_root, real}, key=len, reverse=True):
        text = text.replace(root, SANDBOX_ROOT)
    return text


# --------------------------------------------------------------------------------------------
# process-count limit and process tracking


class PidsCgroup:
    """A pids cgroup (v1 or v2) for one workspace: caps live processes, lists them, kills them.

    RLIMIT_NPROC is ignored for root, so a fork bomb run as root is only stopped by a pids
    cgroup. ``PidsCgroup.create`` returns None where no writable pids controller exists; the
    caller then relies on RLIMIT_NPROC (non-root) and the wall timeout.
    """

    def __init__(self, path: Path):
        self.path = path

    @classmethod
    def create(cls, name: str, max_pids: int) -> PidsCgroup | None:
        for base in _pids_cgroup_bases():
            path = base / name
            try:
                path.mkdir()
                (path / "pids.max").write_text(str(max_pids))
                return cls(path)
            except OSError:
                try:
                    path.rmdir()
                except OSError:
                    pass
        return None

    def procs_file(self) -> str:
        return str(self.path / "cgroup.procs")

    def pids(self) -> list[int]:
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all(self, rounds: int = 50) -> None:
        """SIGKILL every member until none is left (members may fork while we iterate)."""
        for _ in range(rounds):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.005)

    def remove(self) -> None:
        self.kill_all()
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)


def _pids_cgroup_bases() -> list[Path]:
    """Writable cgroup folders with the pids controller: ours in v1, or ours in v2."""
    out: list[Path] = []
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        rel = rel.lstrip("/")
        if "pids" in controllers.split(","):
            base = Path("/sys/fs/cgroup/pids") / rel
            if os.access(base, os.W_OK):
                out.append(base)
        elif controllers == "":
            base = Path("/sys/fs/cgroup") / rel
            try:
                ok = "pids" in (base / "cgroup.subtree_control").read_text().split()
            except OSError:
                ok = False
            if ok and os.access(base, os.W_OK):
                out.append(base)
    return out


def pids_with_marker(marker: str) -> list[int]:
    """Processes whose environment holds ``SWETRAIN_WORKSPACE_ID=marker`` (those we may read)."""
    needle = f"{MARKER_VAR}={marker}".encode()
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                env = fh.read()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            found.append(int(entry))
    return found


def kill_marked(marker: str, rounds: int = 20) -> int:
    """SIGKILL processes carrying ``marker``; returns how many were signalled."""
    total = 0
    for _ in range(rounds):
        pids = pids_with_marker(marker)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                total += 1
            except ProcessLookupError:
                pass
        time.sleep(0.005)
    return total


# --------------------------------------------------------------------------------------------
# running


def _preexec(limits: Limits, cgroup_procs: str | None, nproc_cap: int | None) -> None:
    """Runs in the child between fork and exec: join the cgroup, set rlimits (no locks, no imports)."""
    if cgroup_procs is not None:
        try:
            fd = os.open(cgroup_procs, os.O_WRONLY)
            os.write(fd, b"0")
            os.close(fd)
        except OSError:
            pass
    for res, value in (
        (resource.RLIMIT_CPU, limits.cpu_s),
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes),
        (resource.RLIMIT_CORE, 0),
    ):
        try:
            resource.setrlimit(res, (value, value))
        except (ValueError, OSError):
            pass
    if nproc_cap is not None:
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc_cap, nproc_cap))
        except (ValueError, OSError):
            pass


def _user_process_count() -> int:
    """Processes of our uid (RLIMIT_NPROC counts them all, so the cap is relative)."""
    uid = os.getuid()
    n = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n


def run_limited(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    limits: Limits,
    timeout: float | None = None,
    stdin: bytes | None = None,
    cgroup: PidsCgroup | None = None,
    on_start=None,
) -> CommandResult:
    """Run ``argv`` with limits; kill its whole process group (and cgroup) when it ends or times out."""
    timeout = limits.timeout_s if timeout is None else timeout
    cap = OutputCapture(limits.output_head_chars, limits.output_tail_chars)
    start = time.monotonic()
    # RLIMIT_NPROC counts every process of the uid and is ignored for root: set it relative to
    # what the user already runs, and only where it means something (no cgroup, not root).
    nproc_cap = None if (cgroup is not None or os.geteuid() == 0) else limits.nproc + _user_process_count()
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=str(cwd),
            env=env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=functools.partial(_preexec, limits, cgroup.procs_file() if cgroup else None, nproc_cap),
            close_fds=True,
        )
    except OSError as exc:
        return CommandResult(returncode=127, output=f"could not start command: {exc}", duration_s=0.0)
    if on_start is not None:
        on_start(proc)
    if stdin is not None:
        threading.Thread(target=_feed_stdin, args=(proc, stdin), daemon=True).start()
    timed_out = False
    sel = selectors.DefaultSelector()
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    sel.register(fd, selectors.EVENT_READ)
    deadline = start + timeout
    eof = False
    try:
        while not eof:
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                break
            if proc.poll() is not None:
                break
            for _key, _ in sel.select(timeout=min(0.1, deadline - now)):
                eof = _drain(fd, cap)
        _kill_group(proc, cgroup)
        # Collect what is left in the pipe (writers are dead now), briefly.
        end = time.monotonic() + 1.0
        while not eof and time.monotonic() < end:
            if not sel.select(timeout=0.05):
                if proc.poll() is not None and not _alive_writers(cgroup):
                    # nothing buffered and nobody can write any more
                    break
                continue
            eof = _drain(fd, cap)
    finally:
        sel.close()
        proc.stdout.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    text, truncated = cap.text()
    rc = proc.returncode if proc.returncode is not None else -9
    if timed_out:
        text += f"\n[command timed out after {timeout:g}s and was killed]"
        rc = 124
    return CommandResult(
        returncode=rc, output=text, timed_out=timed_out, truncated=truncated, duration_s=time.monotonic() - start
    )


def _alive_writers(cgroup: PidsCgroup | None) -> bool:
    return bool(cgroup and cgroup.pids())


def _drain(fd: int, cap: OutputCapture) -> bool:
    """Read what is available; True at EOF."""
    while True:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return False
        except OSError:
            return True
        if not data:
            return True
        cap.feed(data)


def _feed_stdin(proc: subprocess.Popen, data: bytes) -> None:
    try:
        assert proc.stdin is not None
        proc.stdin.write(data)
        proc.stdin.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


def _kill_group(proc: subprocess.Popen, cgroup: PidsCgroup | None) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if cgroup is not None:
        cgroup.kill_all()


def new_marker() -> str:
    return uuid.uuid4().hex
