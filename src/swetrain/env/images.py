"""Local Docker images for our own tasks (``swetrain env build-image``), no registry needed.

- The **base image** (:func:`ensure_base_image`): Debian bookworm ``minbase`` with python3, pytest,
  git and patch, made with ``debootstrap`` from the apt mirror this machine uses and imported
  (``docker import``); tagged ``swetrain/base:<hash of the recipe>``, built once.
- A **task image** (:func:`ensure_task_image`): the base plus the task's pristine snapshot at
  ``/testbed`` (the same single-commit repository the local backend copies: no history, no gold
  patch, no hidden tests), ``python`` for ``python3``, ``WORKDIR /testbed`` and ``PYTHONPATH`` as
  the local backend sets it.
  Tagged ``swetrain/task:<content hash>`` (base tag + the snapshot's commit, which hashes its whole
  tree + the layout version), so tasks with the same tree share an image and a rebuild of an
  unchanged task is a no-op.

A task with a virtual environment of its own (``environment`` a venv) cannot carry it into an
image (other interpreter): its image has only what Debian's python3 and pytest provide.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from swetrain.env.docker_client import docker_client
from swetrain.env.interface import SANDBOX_ROOT
from swetrain.env.workspace import WorkspaceError, pristine_snapshot, snapshot_head

BASE_RECIPE = {
    "suite": "bookworm",
    "variant": "minbase",
    "include": ["python3", "python3-pytest", "git", "patch"],
    "layout": 1,
}
TASK_LAYOUT = 2
IMAGE_LABEL = "swetrain.image"


class ImageBuildError(WorkspaceError):
    """An image could not be built: the message says what is missing."""


def base_image_tag() -> str:
    digest = hashlib.sha256(json.dumps(BASE_RECIPE, sort_keys=True).encode()).hexdigest()[:12]
    return f"swetrain/base:{BASE_RECIPE['suite']}-{digest}"


def apt_mirror() -> str:
    """The Debian mirror apt uses on this machine (first ``URIs:``/``deb`` line naming /debian)."""
    files = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for f in files:
        try:
            text = f.read_text()
        except OSError:
            continue
        for line in text.splitlines():
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            for w in words:
                if w.startswith(("http://", "https://")) and w.rstrip("/").endswith("/debian"):
                    return w
    return "http://deb.debian.org/debian"


def _image_exists(client: Any, tag: str) -> bool:
    import docker.errors

    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


def ensure_base_image(*, mirror: str | None = None, log: Callable[[str], None] = print) -> str:
    """The base image's tag, building it with debootstrap first when it is missing."""
    client = docker_client()
    tag = base_image_tag()
    if _image_exists(client, tag):
        return tag
    exe = shutil.which("debootstrap")
    if exe is None:
        raise ImageBuildError(f"building {tag} needs debootstrap (apt-get install debootstrap)")
    if os.geteuid() != 0:
        raise ImageBuildError(f"building {tag} with debootstrap needs root")
    mirror = mirror or apt_mirror()
    work = Path(tempfile.mkdtemp(prefix="swetrain-rootfs-"))
    rootfs = work / "rootfs"
    try:
        log(f"building {tag}: debootstrap {BASE_RECIPE['suite']} from {mirror} (about a minute)")
        proc = subprocess.run(
            [exe, f"--variant={BASE_RECIPE['variant']}", f"--include={','.join(BASE_RECIPE['include'])}",
             BASE_RECIPE["suite"], str(rootfs), mirror],
            capture_output=True,
        )
        if proc.returncode != 0:
            tail = proc.stdout.decode(errors="replace")[-800:] + proc.stderr.decode(errors="replace")[-800:]
            raise ImageBuildError(f"debootstrap failed (exit {proc.returncode}): {tail.strip()}")
        for deb in (rootfs / "var" / "cache" / "apt" / "archives").glob("*.deb"):
            deb.unlink()
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        assert tar.stdout is not None
        repo, name = tag.split(":")
        client.api.import_image(src=_chunks(tar.stdout), repository=repo, tag=name, stream_src=True,
                                changes=['CMD ["bash"]', "ENV LANG=C.UTF-8", f"LABEL {IMAGE_LABEL}=base"])
        tar.wait()
        if not _image_exists(client, tag):
            raise ImageBuildError(f"docker import did not produce {tag}")
        log(f"built {tag}")
        return tag
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _chunks(fh: Any, size: int = 1 << 20) -> Iterator[bytes]:
    while True:
        data = fh.read(size)
        if not data:
            return
        yield data


def task_image_tag(task: Any, base: str | None = None) -> str:
    """``swetrain/task:<hash>`` of the base image, the snapshot commit and the layout."""
    head = snapshot_head(pristine_snapshot(task))
    key = json.dumps([base or base_image_tag(), head, TASK_LAYOUT])
    return "swetrain/task:" + hashlib.sha256(key.encode()).hexdigest()[:16]


def _testbed_tar(snapshot: Path) -> bytes:
    """The snapshot (``.git`` included) as a tar whose members live under ``testbed/``, owned by root."""

    def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(snapshot), arcname=SANDBOX_ROOT.lstrip("/"), filter=owned)
        link = tarfile.TarInfo("usr/local/bin/python")  # `python` as in the local backend's venvs
        link.type, link.linkname, link.mode = tarfile.SYMTYPE, "/usr/bin/python3", 0o777
        tar.addfile(link)
    return buf.getvalue()


def ensure_task_image(task: Any, *, base: str | None = None) -> tuple[str, bool]:
    """(tag, built) of the task's image; built from the base image when missing."""
    client = docker_client()
    base = base or base_image_tag()
    tag = task_image_tag(task, base)
    if _image_exists(client, tag):
        return tag, False
    if not _image_exists(client, base):
        raise ImageBuildError(f"base image {base} is missing: run `swetrain env build-image` as root with debootstrap")
    snapshot = pristine_snapshot(task)
    pypath = ([f"{SANDBOX_ROOT}/src"] if (snapshot / "src").is_dir() else []) + [SANDBOX_ROOT]
    container = client.containers.create(base, command=["true"], network_disabled=True)
    try:
        if not container.put_archive("/", _testbed_tar(snapshot)):
            raise ImageBuildError(f"copying the repository of {task.instance_id} into the image failed")
        repo, name = tag.split(":")
        container.commit(repository=repo, tag=name, changes=[
            f"WORKDIR {SANDBOX_ROOT}", f"ENV PYTHONPATH={':'.join(pypath)}", f"LABEL {IMAGE_LABEL}=task",
        ])
    finally:
        container.remove(force=True)
    return tag, True


def build_images(tasks: list[Any], *, mirror: str | None = None, log: Callable[[str], None] = print) -> tuple[list[Any], dict]:
    """The tasks with ``environment = docker://<their image>`` (built when missing) and counts.

    A task that already names an image keeps it; a task without a source repository is an error.
    ``source`` is written as an absolute path so the new tasks file works from any folder.
    """
    base = ensure_base_image(mirror=mirror, log=log)
    out, built, reused, kept = [], 0, 0, 0
    for task in tasks:
        if task.image is not None:
            out.append(task)
            kept += 1
            continue
        tag, new = ensure_task_image(task, base=base)
        built += new
        reused += not new
        source = task.source_path()
        out.append(task.model_copy(update={"environment": f"docker://{tag}",
                                           "source": str(source) if source else task.source}))
    return out, {"base": base, "built": built, "reused": reused, "kept": kept}
