"""The task environment: the interpreter a task's agent commands and tests run in.

A task names its own virtual environment in ``Task.environment`` (synthesized PyPI projects do)
or a Docker image (``docker://IMAGE``). Every other task (the built-in suite, synthesized or
loaded tasks whose tests need only pytest and the standard library) runs in the **default task
environment**: one virtual environment per interpreter, created once under
``$SWETRAIN_HOME-taskenvs/`` (beside swetrain's home, which the sandbox hides) with ``python -m venv --without-pip``, into which the installed
files of pytest and of what it requires (pluggy, iniconfig, packaging; exceptiongroup and tomli
on Python 3.10) are copied from swetrain's own installation (pytest is a core dependency of
swetrain, pinned in ``pyproject.toml``). So it is made offline in about a second, holds the same
pytest in every run, and agent code never runs in swetrain's own interpreter beside torch,
transformers and the rest: ``import torch`` fails there as it would in a task's real environment.

``$SWETRAIN_TASK_ENV`` names another virtual environment to use as the default (one with more
packages installed, or swetrain's own: ``SWETRAIN_TASK_ENV=$VIRTUAL_ENV``).

:func:`check_environment` is the preflight every command that runs agent code makes once per
distinct environment (:func:`swetrain.env.backend.preflight`): the runner imports and the
verifier's pytest plugin loads, or one line names the environment, what is missing and the fix.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from importlib import metadata
from pathlib import Path

from swetrain.paths import build_once, swetrain_home

ENV_VAR = "SWETRAIN_TASK_ENV"
RUNNER = "pytest"
_LAYOUT = "v1"
_READY = ".swetrain-ready"
_LOCK = threading.Lock()
_CHECKED: dict[str, str | None] = {}


class TaskEnvError(RuntimeError):
    """The task environment cannot be made or cannot run the tests; the message names it, what is
    missing and the fix, on one line."""


def taskenvs_dir() -> Path:
    """Where default task environments live: beside swetrain's home, not in it (the sandbox hides
    the home, with its snapshots and caches; a task environment is bound read-only into it)."""
    home = swetrain_home()
    path = home.with_name(home.name + "-taskenvs")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _requirement_closure(root: str) -> list[metadata.Distribution]:
    """The installed distributions ``root`` needs on this interpreter (markers evaluated)."""
    from packaging.requirements import Requirement

    seen: dict[str, metadata.Distribution] = {}
    todo = [root]
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise TaskEnvError(
                f"default task environment: {name} is not installed in swetrain's interpreter "
                f"({sys.executable}); fix: pip install -e . (swetrain depends on {RUNNER})"
            ) from None
        seen[key] = dist
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return sorted(seen.values(), key=lambda d: d.metadata["Name"].lower())


def _copy_distribution(dist: metadata.Distribution, site: Path) -> int:
    """Copy the installed files of ``dist`` (modules and its .dist-info) into ``site``."""
    copied = 0
    for rel in dist.files or []:
        parts = Path(str(rel)).parts
        if not parts or ".." in parts or "__pycache__" in parts or str(rel).endswith(".pyc"):
            continue  # console scripts live outside site-packages; bytecode is rebuilt
        src = Path(dist.locate_file(rel))
        if not src.is_file():
            continue
        dest = site.joinpath(*parts)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
        copied += 1
    return copied


def _venv_site(venv: Path) -> Path:
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, timeout=60,
    )
    if out.returncode != 0:
        raise TaskEnvError(f"default task environment: the new venv {venv} does not start: {out.stderr.strip()[-300:]}")
    return Path(out.stdout.strip())


def default_env_key() -> tuple[str, list[metadata.Distribution]]:
    """The cache key of the default environment (interpreter, layout, pytest's closure) and that closure."""
    dists = _requirement_closure(RUNNER)
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    ident = json.dumps([_LAYOUT, base, sys.version, [(d.metadata["Name"], d.version) for d in dists]])
    return hashlib.sha1(ident.encode()).hexdigest()[:12], dists


def default_task_env() -> Path:
    """The default task environment (``$SWETRAIN_TASK_ENV``, else the cached venv; built on first use).

    Built in a temp folder and renamed into place, so concurrent builders never see half of one."""
    override = os.environ.get(ENV_VAR, "").strip()
    if override:
        return Path(override).expanduser().resolve()
    key, dists = default_env_key()
    version = next(d.version for d in dists if d.metadata["Name"].lower() == RUNNER)
    final = taskenvs_dir() / f"py{sys.version_info[0]}{sys.version_info[1]}-{RUNNER}{version}-{key}"
    return build_once(final, _LOCK, lambda tmp: _build(tmp, final, dists), _READY)


def _build(tmp: Path, final: Path, dists: list[metadata.Distribution]) -> None:
    proc = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp)],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise TaskEnvError(f"default task environment: `python -m venv` failed in {tmp.parent}: "
                           f"{proc.stderr.strip()[-300:]}; fix: install the venv module (Debian: apt-get install python3-venv)")
    site = _venv_site(tmp)
    for dist in dists:
        _copy_distribution(dist, site)
    # `pytest` on PATH, as in any environment with pytest installed (shebang: the final location)
    script = tmp / "bin" / RUNNER
    script.write_text(f"#!{final}/bin/python\nimport sys\nfrom pytest import console_main\nsys.exit(console_main())\n")
    script.chmod(0o755)
    (tmp / _READY).write_text(json.dumps({d.metadata["Name"]: d.version for d in dists}) + "\n")


def environment_python(env: Path) -> Path:
    return env / "bin" / "python"


def check_environment(env: Path, plugin_dir: Path, *, label: str | None = None) -> None:
    """Raise :class:`TaskEnvError` unless ``env`` can run a task's tests: its interpreter starts,
    the runner imports, and the verifier's plugin (in ``plugin_dir``) loads. Checked once per process."""
    key = f"{env}|{plugin_dir}"
    if key in _CHECKED:
        if _CHECKED[key]:
            raise TaskEnvError(_CHECKED[key])
        return
    name = label or f"task environment {env}"
    python = environment_python(env)
    problem = None
    if not python.exists():
        problem = f"{name}: {python} does not exist; fix: point it at a virtual environment with {RUNNER} installed"
    else:
        code = "import pytest, swetrain_hang_guard; print(pytest.__version__)"
        environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(plugin_dir),
                   "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "LC_ALL": "C.UTF-8"}
        try:
            out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=120, env=environ)
        except (OSError, subprocess.TimeoutExpired) as exc:
            problem = f"{name}: its interpreter {python} does not start ({exc})"
        else:
            if out.returncode != 0:
                last = (out.stderr.strip().splitlines() or ["exit code %d" % out.returncode])[-1]
                fix = (f"remove {env} (it is rebuilt from swetrain's own {RUNNER} on the next run)"
                       if env.parent == taskenvs_dir() else f"{python} -m pip install {RUNNER}")
                problem = f"{name} cannot run the tests: {last}; fix: {fix}"
    _CHECKED[key] = problem
    if problem:
        raise TaskEnvError(problem)
