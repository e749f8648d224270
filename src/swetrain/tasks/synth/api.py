"""High-level synthesis: from a PyPI pin or a local tree to a validated task file.

Layout under the work directory (default ``cache_dir("synth")``)::

    <workdir>/<name>-<version>/project/   the unpacked sdist (the editable-install target)
    <workdir>/<name>-<version>/repo/      the snapshot git repository (tasks' ``source``)
    cache_dir("venvs")/<name>-<version>-<hash>/   the reusable virtual environment

The output file is written only when synthesis succeeded (atomically, via a temporary file).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from swetrain.paths import cache_dir
from swetrain.tasks.record import Task, save_tasks
from swetrain.tasks.synth.errors import SynthError
from swetrain.tasks.synth.pipeline import Log, ProjectSpec, SynthConfig, Synthesizer, SynthReport
from swetrain.tasks.synth.project import ensure_venv, fetch_sdist, import_root, parse_requirement, venv_python
from swetrain.tasks.synth.projects import Profile, guess_profile, with_overrides
from swetrain.tasks.synth.snapshot import copy_tree

Progress = Callable[[int, int], None]


def _domain_labels(profile: Profile) -> dict | None:
    return {"domain": {"l1": profile.domain}} if profile.domain else None


def _route(profile: Profile) -> str | None:
    if not profile.domain:
        return None
    try:  # the label layer owns the Domain L1 -> route mapping; use it when it exists
        from swetrain.label import route_of  # type: ignore[attr-defined]

        return route_of(profile.domain)
    except Exception:  # noqa: BLE001 - fall back to the paper's three-route table
        return _ROUTES.get(profile.domain)


# Seed 000, Appendix B.4: A service/data/security, B user-facing applications, C systems/tooling.
_ROUTES = {
    "web_backend": "A", "database_storage": "A", "data_science": "A", "data_engineering": "A",
    "security_auth": "A", "blockchain_web3": "A", "cms_ecommerce": "A",
    "web_frontend": "B", "mobile_dev": "B", "desktop_gui": "B", "media_graphics": "B", "game_dev": "B",
    "docs_knowledge": "B",
    "os_system": "C", "iot_embedded": "C", "devops_infra": "C", "devtools_test": "C", "lang_runtime": "C",
    "pkg_manager_cli": "C",
}


def prepare_pypi(requirement: str, workdir: Path, profile_overrides: dict | None = None,
                 log: Log | None = None) -> ProjectSpec:
    """Fetch, unpack and install ``NAME==VERSION``; return a spec ready for synthesis."""
    req = parse_requirement(requirement)
    home = workdir / f"{req.name.lower()}-{req.version}"
    if log:
        log(f"fetching {req} ...")
    tree = fetch_sdist(req, home)
    profile = with_overrides(guess_profile(tree, req.name), **(profile_overrides or {}))
    if not profile.paths or not any((tree / p.split("::")[0]).exists() for p in profile.paths):
        raise SynthError(str(req), "no tests found in the sdist (looked for tests/, test/, <pkg>/tests, test_*.py); "
                         "pass --test-path if they live elsewhere")
    venv = ensure_venv(tree, f"{req.name.lower()}-{req.version}", profile, cache_dir("venvs"), log=log)
    return ProjectSpec(name=req.name, tree=tree, python=venv_python(venv), profile=profile,
                       repo=f"pypi/{req.name.lower()}", instance_prefix=f"pypi__{req.name.lower()}-{req.version}",
                       version=req.version, environment=venv, import_root=import_root(tree),
                       labels=_domain_labels(profile), route=_route(profile))


def prepare_path(path: Path, workdir: Path, python: str | None = None, profile_overrides: dict | None = None,
                 log: Log | None = None) -> ProjectSpec:
    """A local source tree. It is copied first (an editable install writes into its tree). With
    ``python`` given (or no packaging metadata) tests run with that interpreter (default: this
    one); otherwise a project virtual environment is built as for PyPI projects."""
    path = Path(path).resolve()
    if not path.is_dir():
        raise SynthError(str(path), "not a directory")
    name = path.name
    home = workdir / f"local-{name}"
    tree = copy_tree(path, home / "project")
    profile = with_overrides(guess_profile(tree, name), **(profile_overrides or {}))
    if not profile.paths:
        raise SynthError(str(path), "no tests found (looked for tests/, test/, <pkg>/tests, test_*.py); pass --test-path")
    packaged = any((tree / f).exists() for f in ("pyproject.toml", "setup.py", "setup.cfg"))
    environment = None
    if python is None and packaged and _installable(tree):
        environment = ensure_venv(tree, f"local-{name}", profile, cache_dir("venvs"), log=log)
        interp = venv_python(environment)
    else:
        interp = Path(python or sys.executable)
    return ProjectSpec(name=name, tree=tree, python=interp, profile=profile, repo=f"local/{name}",
                       instance_prefix=f"local__{name}", environment=environment, import_root=import_root(tree),
                       labels=_domain_labels(profile), route=_route(profile), autoload_plugins=environment is not None)


def _installable(tree: Path) -> bool:
    if (tree / "setup.py").exists() or (tree / "setup.cfg").exists():
        return True
    text = (tree / "pyproject.toml").read_text(errors="replace")
    return "[build-system]" in text or "[project]" in text


def synthesize(spec: ProjectSpec, out: str | Path | None, config: SynthConfig, workdir: Path,
               log: Log | None = None, progress: Progress | None = None, acceptor=None) -> tuple[list[Task], SynthReport]:
    """Run the pipeline for ``spec`` and (when ``out`` is given) write the tasks atomically."""
    repo_dir = workdir / (f"{spec.name.lower()}-{spec.version}" if spec.version else f"local-{spec.name}") / "repo"
    synth = Synthesizer(spec, repo_dir, config, log=log)
    try:
        synth.prepare()
        tasks = synth.run(progress=progress, acceptor=acceptor)
    finally:
        synth.cleanup()
    if not tasks:
        raise SynthError(spec.instance_prefix, f"no candidate survived validation ({synth.report.candidates} tried: "
                         f"{synth.report.rejected})")
    if out is not None:
        save_tasks(tasks, out)
    return tasks, synth.report


def default_workdir(workdir: str | Path | None) -> Path:
    if workdir is None:
        return cache_dir("synth")
    p = Path(workdir).expanduser().resolve()
    p.mkdir(parents=True, exist_ok=True)
    return p

