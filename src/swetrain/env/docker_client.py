"""One Docker client per process, the labels of swetrain's containers, and cleaning up after runs.

Every container swetrain starts carries ``LABEL`` and an owner label naming the host, the process
id and that process's start time. The first client of a process removes labelled containers whose
owner process is gone (a run killed with SIGKILL leaves its containers behind; the next run cleans
them); an ``atexit`` hook removes the containers of the process itself.
"""

from __future__ import annotations

import atexit
import os
import socket
import threading
import weakref
from typing import Any

LABEL = "swetrain.workspace"
OWNER_LABEL = "swetrain.owner"

_LOCK = threading.Lock()
_CLIENT: Any = None
_LIVE: weakref.WeakSet = weakref.WeakSet()  # open DockerWorkspaces of this process


class DockerUnavailable(RuntimeError):
    """No Docker SDK, or no daemon answering: one line saying which and what to do."""


def _start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return "?"


def owner_id() -> str:
    """``host/pid/start`` of this process (start time guards against a reused pid)."""
    pid = os.getpid()
    return f"{socket.gethostname()}/{pid}/{_start_time(pid)}"


def owner_alive(owner: str) -> bool:
    """Whether the process that labelled a container still runs (other hosts: assumed alive)."""
    try:
        host, pid, start = owner.split("/")
    except ValueError:
        return False
    if host != socket.gethostname():
        return True
    return os.path.exists(f"/proc/{pid}") and _start_time(int(pid)) == start


def docker_client() -> Any:
    """The process's Docker client (``docker.from_env()``), checked with a ping; stale containers
    of dead swetrain processes are removed on first use. Raises :class:`DockerUnavailable`."""
    global _CLIENT
    with _LOCK:
        if _CLIENT is not None:
            return _CLIENT
        try:
            import docker
        except ImportError:
            raise DockerUnavailable(
                "the docker sandbox needs the Docker SDK: pip install 'swetrain[docker]' (or pip install docker)"
            ) from None
        where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        try:
            client = docker.from_env(timeout=120)
            client.ping()
        except Exception as exc:  # noqa: BLE001 - any failure to reach the daemon is the same answer
            reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise DockerUnavailable(
                f"the Docker daemon is not reachable at {where} ({reason}); start it (e.g. `dockerd &`) "
                "or use --sandbox local"
            ) from None
        clean_stale(client)
        atexit.register(_close_live)
        _CLIENT = client
        return client


def clean_stale(client: Any) -> int:
    """Remove labelled containers whose owner process is gone; returns how many."""
    removed = 0
    try:
        # sparse: the list call alone (labels included); a full list inspects every container and
        # fails when another process removes one of its own in between
        containers = client.containers.list(all=True, sparse=True, filters={"label": LABEL})
    except Exception:  # noqa: BLE001
        return 0
    for c in containers:
        if owner_alive((c.attrs.get("Labels") or {}).get(OWNER_LABEL, "")):
            continue
        try:
            c.remove(force=True)
            removed += 1
        except Exception:  # noqa: BLE001 - already gone
            pass
    return removed


def register(ws: Any) -> None:
    _LIVE.add(ws)


def _close_live() -> None:
    for ws in list(_LIVE):
        try:
            ws.close()
        except Exception:  # noqa: BLE001 - exiting anyway
            pass


def docker_isolation_note() -> str:
    """One line saying how the docker backend isolates agent commands (``env selfcheck``, run records)."""
    return ("isolated: docker sandbox (one container per workspace of the task's image, --network none, pids/memory/"
            "CPU limits, no capabilities; the agent sees the image's /testbed)")
