"""Getting a project ready: fetch its sdist, unpack it, and build its reusable virtual environment.

* ``fetch_sdist`` runs ``pip download --no-binary NAME --no-deps NAME==VERSION`` (only the named
  package from source; its build tools may come as wheels) and unpacks the archive safely.
* ``ensure_venv`` makes one clean virtual environment per project (never shared: pytest plugins
  leak between projects) with the project installed editable plus pytest, pytest-timeout and the
  project's test dependencies, and reuses it on later runs (keyed by name, version, Python and
  dependency list; a marker file is written only after a successful install).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from swetrain.tasks.synth.errors import SynthError
from swetrain.tasks.synth.projects import PYTEST_DEPENDENCIES, Profile, normalize_name

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([A-Za-z0-9.+!_-]+)\s*$")
_READY = ".swetrain-ready.json"


@dataclass(frozen=True)
class Requirement:
    name: str
    version: str

    def __str__(self) -> str:
        return f"{self.name}=={self.version}"


def parse_requirement(text: str) -> Requirement:
    """``NAME==VERSION`` (a pin is required: tasks must be reproducible)."""
    m = _REQ.match(text or "")
    if not m:
        raise SynthError(repr(text), "expected a pinned requirement NAME==VERSION, e.g. toolz==1.2.0")
    req = Requirement(m.group(1), m.group(2))
    if normalize_name(req.name) in PYTEST_DEPENDENCIES:
        raise SynthError(str(req), "pytest itself imports this package, so a mutant would break the test runner")
    return req


def _tail(text: str, n: int = 1500) -> str:
    text = text.strip()
    return text if len(text) <= n else "..." + text[-n:]


def fetch_sdist(req: Requirement, dest: str | Path, timeout_s: float = 600) -> Path:
    """Download and unpack the sdist of ``req`` into ``dest`` (reused when already there)."""
    dest = Path(dest)
    marker = dest / ".swetrain-fetched"
    if marker.exists() and (dest / "project").is_dir():
        return dest / "project"
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="swetrain-dl-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-binary", req.name, "--no-deps",
               "--disable-pip-version-check", "-q", "-d", tmp, str(req)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise SynthError(str(req), f"pip download timed out after {timeout_s:.0f} s") from None
        if proc.returncode != 0:
            err = proc.stderr + proc.stdout
            if "No matching distribution" in err or "Could not find a version" in err:
                raise SynthError(str(req), "no such package/version with an sdist on PyPI")
            raise SynthError(str(req), f"pip download failed:\n{_tail(err)}")
        archives = sorted(Path(tmp).glob("*.tar.gz")) + sorted(Path(tmp).glob("*.zip")) + sorted(Path(tmp).glob("*.tar.bz2"))
        if not archives:
            raise SynthError(str(req), "pip downloaded no source archive (the project may ship wheels only)")
        unpack = Path(tmp) / "unpacked"
        _unpack(archives[0], unpack, str(req))
        tops = [p for p in unpack.iterdir()]
        root = tops[0] if len(tops) == 1 and tops[0].is_dir() else unpack
        target = dest / "project"
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(root), target)
    marker.write_text(str(req) + "\n")
    return target


def _unpack(archive: Path, dest: Path, subject: str) -> None:
    dest.mkdir(parents=True)
    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    if info.filename.startswith("/") or ".." in Path(info.filename).parts:
                        raise SynthError(subject, f"unsafe path in archive: {info.filename}")
                zf.extractall(dest)
        else:
            with tarfile.open(archive) as tf:
                tf.extractall(dest, filter="data")
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as exc:
        raise SynthError(subject, f"cannot unpack {archive.name}: {exc}") from None


def test_extras(root: Path) -> list[str]:
    """The project's optional-dependency groups meant for testing (from PKG-INFO / pyproject)."""
    names: set[str] = set()
    pkg_info = root / "PKG-INFO"
    if pkg_info.exists():
        for line in pkg_info.read_text(errors="replace").splitlines():
            if line.startswith("Provides-Extra:"):
                names.add(line.split(":", 1)[1].strip())
    pyproject = root / "pyproject.toml"
    if pyproject.exists():
        import tomllib

        try:
            data = tomllib.loads(pyproject.read_text(errors="replace"))
            names |= set(data.get("project", {}).get("optional-dependencies", {}))
        except tomllib.TOMLDecodeError:
            pass
    return sorted(n for n in names if n.lower() in ("test", "tests", "testing"))


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def ensure_venv(project_root: str | Path, key: str, profile: Profile, cache: str | Path,
                timeout_s: float = 900, log=None) -> Path:
    """A ready virtual environment for the project at ``project_root`` (built once, then reused)."""
    project_root = Path(project_root)
    extras = list(profile.extras) if profile.known else test_extras(project_root)
    spec = {"project": str(project_root), "extras": extras, "deps": ["pytest", "pytest-timeout", *profile.extra_deps],
            "python": sys.version.split()[0]}
    digest = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:10]
    venv = Path(cache) / f"{key}-{digest}"
    ready = venv / _READY
    if ready.exists() and venv_python(venv).exists():
        return venv
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    try:
        _run([sys.executable, "-m", "venv", str(venv)], key, "creating the virtual environment", timeout_s)
        target = str(project_root) + (f"[{','.join(extras)}]" if extras else "")
        if log:
            log(f"installing {key} (editable) with {', '.join(spec['deps'])} into {venv}")
        _run([str(venv_python(venv)), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", target,
              *spec["deps"]], key, "installing the project and its test dependencies", timeout_s)
    except BaseException:
        shutil.rmtree(venv, ignore_errors=True)
        raise
    ready.write_text(json.dumps(spec, indent=1))
    return venv


def _run(cmd: list[str], subject: str, what: str, timeout_s: float) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise SynthError(subject, f"{what} timed out after {timeout_s:.0f} s") from None
    if proc.returncode != 0:
        raise SynthError(subject, f"{what} failed (install failure):\n{_tail(proc.stderr + proc.stdout)}")


def import_root(root: str | Path) -> str:
    """Where the project's packages live relative to its root: ``src`` for src-layouts, else ``.``."""
    src = Path(root) / "src"
    if src.is_dir() and any((p / "__init__.py").exists() or p.suffix == ".py" for p in src.iterdir()):
        return "src"
    return "."
