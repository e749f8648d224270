"""Run a project's pytest suite on a scratch tree and read back exact per-test outcomes.

This is synthesis' fast inner loop: no sandbox, no patch application, just pytest with ``--tb=no``
(tracebacks only when asked, for the failing tests' messages), ``PYTHONDONTWRITEBYTECODE=1`` so a
same-second edit is never hidden by stale bytecode, and a wall-clock kill of the whole process group.
Outcomes come from a tiny pytest plugin (``_reporter.py``) that records pytest's own node ids, so the
ids written into a task are exactly what ``pytest <id>`` selects later.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

_PLUGIN_MODULE = "swetrain_synth_reporter"
_PLUGIN_DIR: Path | None = None


def _plugin_dir() -> Path:
    """A private folder holding the reporter plugin under a unique module name."""
    global _PLUGIN_DIR
    if _PLUGIN_DIR is None or not (_PLUGIN_DIR / f"{_PLUGIN_MODULE}.py").exists():
        d = Path(tempfile.mkdtemp(prefix="swetrain-reporter-"))
        shutil.copyfile(Path(__file__).with_name("_reporter.py"), d / f"{_PLUGIN_MODULE}.py")
        _PLUGIN_DIR = d
    return _PLUGIN_DIR


@dataclass
class RunResult:
    """Outcome of one pytest run: ``tests`` maps node id -> PASSED/FAILED/ERROR/SKIPPED/XFAIL."""

    tests: dict[str, str] = field(default_factory=dict)
    longrepr: dict[str, str] = field(default_factory=dict)
    collect_errors: dict[str, str] = field(default_factory=dict)
    duration_s: float = 0.0
    timed_out: bool = False
    returncode: int | None = None
    output_tail: str = ""

    def passed(self) -> set[str]:
        return {t for t, s in self.tests.items() if s == "PASSED"}


def pytest_env(import_roots: Sequence[str] = ()) -> dict[str, str]:
    """Environment for a test run: no bytecode, no user site, the reporter plugin importable."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "VIRTUAL_ENV")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONNOUSERSITE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONPATH"] = os.pathsep.join([*import_roots, str(_plugin_dir())])
    return env


def run_pytest(
    python: str | Path,
    cwd: str | Path,
    options: Sequence[str] = (),
    paths: Sequence[str] = (),
    *,
    test_ids: Sequence[str] | None = None,
    timeout_s: float = 600.0,
    tracebacks: bool = False,
    per_test_timeout_s: float | None = None,
    import_roots: Sequence[str] = (),
    autoload: bool = True,
) -> RunResult:
    """Run ``python -m pytest`` in ``cwd`` and return per-test outcomes (exact node ids).

    ``options`` are the project's own pytest options (``-m`` filters, ``-o`` ini overrides, ...),
    ``paths`` its test paths; ``test_ids`` replaces the paths when given. On timeout the whole process group is killed
    and ``timed_out`` is set (partial outcomes are discarded: a hanging mutant is invalid).
    ``autoload=False`` disables pytest's plugin auto-loading (for the shared interpreter, whose
    site-packages may hold any plugins; pytest-timeout is then loaded explicitly).
    """
    cwd = Path(cwd)
    with tempfile.TemporaryDirectory(prefix="swetrain-run-") as tmp:
        report = Path(tmp) / "report.json"
        cmd = [str(python), "-m", "pytest", "-p", _PLUGIN_MODULE, "-p", "no:cacheprovider", "-q", "-rN",
               "--tb=short" if tracebacks else "--tb=no", "-o", "console_output_style=classic"]
        if per_test_timeout_s:
            cmd += (["-p", "pytest_timeout"] if not autoload else []) + [f"--timeout={per_test_timeout_s:g}"]
        cmd += list(options)
        cmd += list(test_ids) if test_ids is not None else list(paths)
        env = pytest_env(import_roots)
        env["SWETRAIN_SYNTH_REPORT"] = str(report)
        if not autoload:
            env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        timed_out = False
        try:
            out, _ = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            out, _ = proc.communicate()
        duration = time.monotonic() - start
        _kill_group(proc)  # leftovers the suite forked
        res = RunResult(duration_s=duration, timed_out=timed_out, returncode=proc.returncode,
                        output_tail=out.decode(errors="replace")[-4000:])
        if not timed_out and report.exists():
            data = json.loads(report.read_text(encoding="utf-8"))
            res.tests = data.get("tests", {})
            res.longrepr = data.get("longrepr", {})
            res.collect_errors = data.get("collect_errors", {})
        return res


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
