"""The synthesis pipeline: baseline -> mutants -> fast validation -> verifier acceptance -> tasks.

For one project (a PyPI sdist, a local tree or a built-in repository):

1. Snapshot the clean tree into the project's git repository (:class:`ProjectRepo`) and copy it to
   a scratch tree where mutants are tried.
2. Baseline: run the suite twice; tests passing both times are usable, tests that change outcome
   are flaky and excluded (reported), tests failing both times are excluded (reported). No passing
   test at all is an error ("tests already failing" / "no tests").
3. Enumerate mutation sites (:mod:`.mutate`) in non-test code, order them deterministically from
   the seed, and for each candidate run the whole suite on the scratch tree with a wall-clock kill at
   ``timeout_factor`` x the clean time. FAIL_TO_PASS = usable tests that no longer pass, PASS_TO_PASS
   = a bounded sample of usable tests that still pass; both must be non-empty. The F2P tests are then
   rerun with tracebacks (confirming they fail and collecting their messages).
4. Commit the mutant as the task's base commit, write the gold patch (the reverse diff) and the
   problem statement, and accept the task only when the real verifier says buggy -> unresolved and
   gold -> resolved twice (``verify=True``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import random
import re
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from swetrain.tasks.record import Task
from swetrain.tasks.synth.errors import SynthError
from swetrain.tasks.synth.mutate import (
    CRASH_EXCEPTION,
    KIND_BUG_CLASS,
    KIND_TIER,
    KINDS,
    Site,
    apply_site,
    enumerate_sites,
    order_sites,
    source_files,
)
from swetrain.tasks.synth.projects import Profile
from swetrain.tasks.synth.runner import RunResult, run_pytest
from swetrain.tasks.synth.snapshot import ProjectRepo, copy_tree
from swetrain.tasks.synth.statement import Evidence, function_doc, leaks, write_statement

Log = Callable[[str], None]


@dataclass
class SynthConfig:
    """Knobs of one synthesis run (defaults suit small projects on 2 cores)."""

    max_tasks: int = 10
    seed: int = 0
    max_candidates: int | None = None  # default: 6 x max_tasks + 10
    f2p_max: int = 20
    p2p_max: int = 25
    timeout_factor: float = 4.0
    min_timeout_s: float = 8.0
    per_test_timeout_s: float = 30.0
    verify: bool = True
    verify_repeats: int = 2
    verify_timeout_s: float = 120.0
    kinds: tuple[str, ...] | None = None  # default: the 13 standard kinds (mutate.KINDS)

    def candidate_budget(self) -> int:
        return self.max_candidates if self.max_candidates is not None else 6 * self.max_tasks + 10


@dataclass
class ProjectSpec:
    """A project ready for synthesis: a clean tree, the interpreter that runs its tests, labels."""

    name: str
    tree: Path
    python: Path
    profile: Profile
    repo: str  # Task.repo, e.g. "pypi/toolz"
    instance_prefix: str  # e.g. "pypi__toolz-1.2.0"
    version: str | None = None
    environment: Path | None = None
    import_root: str = "."
    labels: dict[str, Any] | None = None
    route: str | None = None
    # False for the shared interpreter: pytest plugins installed there are not loaded (isolation
    # from whatever else is installed, and 3-4x faster start-up); the task's test_cmd says so too.
    autoload_plugins: bool = True


@dataclass
class Baseline:
    usable: list[str]
    flaky: list[str]
    failing: list[str]
    skipped: int
    duration_s: float
    collect_errors: list[str]


@dataclass
class SynthReport:
    project: str
    baseline_tests: int = 0
    usable_tests: int = 0
    flaky: list[str] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)
    clean_run_s: float = 0.0
    sites: int = 0
    candidates: int = 0
    kept: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    kinds_kept: dict[str, int] = field(default_factory=dict)
    prepare_s: float = 0.0
    synth_s: float = 0.0
    verify_s: float = 0.0

    @property
    def seconds_per_task(self) -> float | None:
        return (self.synth_s / self.kept) if self.kept else None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["seconds_per_task"] = self.seconds_per_task
        return d


def selectable(test_id: str) -> bool:
    """Node ids that survive any command line: printable ASCII without whitespace."""
    return test_id.isascii() and test_id.isprintable() and not any(c.isspace() for c in test_id)


def _timeout_plugin(python: Path) -> bool:
    if Path(python).resolve() == Path(sys.executable).resolve():
        return importlib.util.find_spec("pytest_timeout") is not None
    return True  # project environments always get pytest-timeout installed


class Synthesizer:
    """Synthesis for one project. Use :meth:`prepare` then :meth:`run`."""

    def __init__(self, spec: ProjectSpec, repo_dir: str | Path, config: SynthConfig, log: Log | None = None):
        self.spec = spec
        self.repo_dir = Path(repo_dir)
        self.config = config
        self.log = log or (lambda _m: None)
        self.report = SynthReport(project=spec.instance_prefix)
        self.repo: ProjectRepo | None = None
        self.scratch: Path | None = None
        self.baseline: Baseline | None = None
        self._per_test = config.per_test_timeout_s if _timeout_plugin(spec.python) else None

    # ---------------------------------------------------------------- running tests
    def _run(self, *, test_ids=None, timeout_s: float, tracebacks: bool = False) -> RunResult:
        assert self.scratch is not None
        roots = [str((self.scratch / self.spec.import_root).resolve())]
        return run_pytest(self.spec.python, self.scratch, self.spec.profile.options, self.spec.profile.paths,
                          test_ids=test_ids, timeout_s=timeout_s, tracebacks=tracebacks,
                          per_test_timeout_s=self._per_test, import_roots=roots,
                          autoload=self.spec.autoload_plugins)

    # ---------------------------------------------------------------- prepare + baseline
    def prepare(self) -> Baseline:
        t0 = time.monotonic()
        self.repo = _snapshot(self.spec.tree, self.repo_dir)
        self.scratch = self.repo_dir.parent / f".{self.repo_dir.name}-scratch"
        copy_tree(self.repo.path, self.scratch)
        shutil.rmtree(self.scratch / ".git", ignore_errors=True)
        runs = []
        for i in range(2):
            res = self._run(timeout_s=max(600.0, self.config.min_timeout_s))
            if res.timed_out:
                raise SynthError(self.spec.instance_prefix, "the clean test suite did not finish within 600 s")
            if not res.tests:
                detail = "; ".join(f"{k}: {v.splitlines()[-1] if v else ''}" for k, v in list(res.collect_errors.items())[:3])
                raise SynthError(self.spec.instance_prefix,
                                 f"no tests ran (test paths {list(self.spec.profile.paths) or ['<default>']}"
                                 f"{'; collection errors: ' + detail if detail else ''}; pytest said: "
                                 f"{res.output_tail.strip().splitlines()[-1] if res.output_tail.strip() else 'nothing'})")
            runs.append(res)
            self.log(f"baseline run {i + 1}: {len(res.tests)} tests, {len(res.passed())} passed in {res.duration_s:.1f} s")
        a, b = runs
        ids = sorted(set(a.tests) | set(b.tests))
        usable = [t for t in ids if a.tests.get(t) == "PASSED" and b.tests.get(t) == "PASSED" and selectable(t)]
        flaky = [t for t in ids if (a.tests.get(t) == "PASSED") != (b.tests.get(t) == "PASSED")]
        failing = [t for t in ids if a.tests.get(t) in ("FAILED", "ERROR") and b.tests.get(t) in ("FAILED", "ERROR")]
        skipped = sum(1 for t in ids if a.tests.get(t) in ("SKIPPED", "XFAIL"))
        if not usable:
            raise SynthError(self.spec.instance_prefix,
                             f"tests already failing: none of {len(ids)} tests passes reliably on the clean tree "
                             f"({len(failing)} fail, {len(flaky)} flaky)")
        self.baseline = Baseline(usable, flaky, failing, skipped, max(a.duration_s, b.duration_s),
                                 sorted(set(a.collect_errors) | set(b.collect_errors)))
        r = self.report
        r.baseline_tests, r.usable_tests, r.flaky, r.failing = len(ids), len(usable), flaky, failing
        r.clean_run_s = self.baseline.duration_s
        r.prepare_s = time.monotonic() - t0
        if flaky:
            self.log(f"excluded {len(flaky)} flaky tests: {', '.join(flaky[:5])}{' ...' if len(flaky) > 5 else ''}")
        if failing:
            self.log(f"excluded {len(failing)} tests failing on the clean tree")
        return self.baseline

    # ---------------------------------------------------------------- candidates
    def sites(self) -> list[Site]:
        assert self.scratch is not None
        files = source_files(self.scratch, self.spec.profile.include)
        sites: list[Site] = []
        for rel in files:
            try:
                src = (self.scratch / rel).read_text(encoding="utf-8")
                sites += enumerate_sites(src, rel, self.config.kinds or KINDS)
            except Exception as exc:  # noqa: BLE001 - an unparsable file is skipped, not fatal
                self.log(f"skipping {rel}: {type(exc).__name__}: {exc}")
        self.report.sites = len(sites)
        return order_sites(sites, self.config.seed)

    def try_site(self, site: Site) -> Task | str:
        """Validate one mutation site. Returns the candidate task or the reason it was rejected."""
        assert self.scratch is not None and self.baseline is not None and self.repo is not None
        path = self.scratch / site.path
        original = path.read_text(encoding="utf-8")
        mutated = apply_site(original, site)
        if mutated is None:
            return "no_change"
        timeout = max(self.config.min_timeout_s, self.config.timeout_factor * self.baseline.duration_s)
        try:
            path.write_text(mutated, encoding="utf-8")
            res = self._run(timeout_s=timeout)
            if res.timed_out:
                return "timeout"
            usable = self.baseline.usable
            broken = [t for t in usable if res.tests.get(t) != "PASSED"]
            still = [t for t in usable if res.tests.get(t) == "PASSED"]
            if not broken:
                return "no_fail_to_pass"
            if not still:
                return "no_pass_to_pass"
            rng = random.Random(f"{self.config.seed}:{site.key}")
            f2p = sorted(rng.sample(broken, min(len(broken), self.config.f2p_max)))
            tb = self._run(test_ids=f2p, timeout_s=timeout, tracebacks=True)
            if tb.timed_out:
                return "timeout"
            f2p = [t for t in f2p if tb.tests.get(t) not in ("PASSED", None, "SKIPPED", "XFAIL")
                   or (t not in tb.tests and tb.collect_errors)]
            if not f2p:
                return "f2p_not_reproducible"
            failures = {t: self._clean_text(tb.longrepr.get(t, "")) for t in f2p}
            if not any(failures.values()) and tb.collect_errors:
                msg = next(iter(tb.collect_errors.values()))
                failures = {t: self._clean_text(msg) for t in f2p}
            if site.kind in CRASH_EXCEPTION:
                # the easy tier: every F2P test must crash with the kind's exception in a traceback
                # through the mutated file (a crash the library catches and turns into a wrong
                # value is not this tier); tests that fail otherwise are left out of F2P
                f2p = [t for t in f2p if crash_shown(failures[t], CRASH_EXCEPTION[site.kind], site.path)]
                if not f2p:
                    return "no_crash_traceback"
                failures = {t: failures[t] for t in f2p}
        finally:
            path.write_text(original, encoding="utf-8")
        p2p = self._sample_p2p(still, f2p, rng)
        digest = hashlib.sha1(f"{site.key}\n{mutated}".encode()).hexdigest()[:8]
        instance_id = f"{self.spec.instance_prefix}-{site.kind}-{digest}"
        base = self.repo.add_file_change(site.path, mutated, instance_id)
        patch = self.repo.gold_patch(base)
        module = site.path[:-3].replace("/", ".")
        if self.spec.import_root != "." and module.startswith(self.spec.import_root + "."):
            module = module[len(self.spec.import_root) + 1:]
        module = module.removesuffix(".__init__")
        ev = Evidence(project=self.spec.name, module=module, function=site.function,
                      doc=function_doc(original, site.function), failing_tests=tuple(f2p), failures=failures,
                      passing_count=len(still))
        statement = write_statement(ev, patch, seed=int(digest, 16) ^ self.config.seed,
                                    traceback=site.kind in CRASH_EXCEPTION)
        if leaks(statement, patch):
            return "statement_leak"
        labels = dict(self.spec.labels or {})
        labels.setdefault("task_type", {"l1": "bug_fix", "l2": KIND_BUG_CLASS[site.kind]})
        labels["synth"] = {"kind": site.kind, "file": site.path, "function": site.function, "seed": self.config.seed}
        if KIND_TIER[site.kind] != "standard":  # absent means "standard" (tasks.record.task_tier)
            labels["tier"] = KIND_TIER[site.kind]
        return Task(
            instance_id=instance_id, repo=self.spec.repo, base_commit=base, problem_statement=statement,
            patch=patch, test_patch="", FAIL_TO_PASS=f2p, PASS_TO_PASS=p2p, version=self.spec.version,
            environment_setup_commit=self.repo.clean, source=str(self.repo.path.resolve()),
            environment=str(self.spec.environment) if self.spec.environment else None,
            test_cmd=task_test_cmd(self.spec), labels=labels, route=self.spec.route,
        )

    def _clean_text(self, text: str) -> str:
        """Traceback text without machine-specific paths and object addresses."""
        assert self.scratch is not None
        for root in {str(self.scratch), str(self.scratch.resolve())}:
            text = text.replace(root + "/", "").replace(root, ".")
        return re.sub(r"0x[0-9a-f]{6,}", "0x...", text)

    def _sample_p2p(self, still: list[str], f2p: list[str], rng: random.Random) -> list[str]:
        """Up to ``p2p_max`` passing tests: half from the F2P tests' files (most likely to be
        affected by a wrong fix), the rest from the whole suite."""
        files = {t.split("::", 1)[0] for t in f2p}
        near = [t for t in still if t.split("::", 1)[0] in files]
        far = [t for t in still if t.split("::", 1)[0] not in files]
        k_near = min(len(near), self.config.p2p_max // 2)
        chosen = rng.sample(near, k_near)
        chosen += rng.sample(far, min(len(far), self.config.p2p_max - k_near))
        if len(chosen) < self.config.p2p_max:
            rest = [t for t in near if t not in set(chosen)]
            chosen += rng.sample(rest, min(len(rest), self.config.p2p_max - len(chosen)))
        return sorted(chosen)

    # ---------------------------------------------------------------- the loop
    def run(self, progress: Callable[[int, int], None] | None = None, acceptor=None) -> list[Task]:
        """Try candidates until ``max_tasks`` are kept or the candidate budget is spent."""
        if self.baseline is None:
            self.prepare()
        t0 = time.monotonic()
        kept: list[Task] = []
        rejected: Counter[str] = Counter()
        kinds: Counter[str] = Counter()
        if self.config.verify and acceptor is None:
            acceptor = VerifierAcceptance(self.config)
        budget = self.config.candidate_budget()
        for site in self.sites():
            if len(kept) >= self.config.max_tasks or self.report.candidates >= budget:
                break
            self.report.candidates += 1
            outcome = self.try_site(site)
            if isinstance(outcome, Task) and acceptor is not None:
                tv = time.monotonic()
                reason = acceptor(outcome)
                self.report.verify_s += time.monotonic() - tv
                if reason:
                    outcome = reason
            if isinstance(outcome, Task):
                kept.append(outcome)
                kinds[site.kind] += 1
                self.log(f"kept {outcome.instance_id} ({len(outcome.FAIL_TO_PASS)} F2P, {len(outcome.PASS_TO_PASS)} P2P)")
            else:
                rejected[outcome] += 1
            if progress:
                progress(len(kept), self.report.candidates)
        self.report.kept = len(kept)
        self.report.rejected = dict(rejected)
        self.report.kinds_kept = dict(kinds)
        self.report.synth_s = time.monotonic() - t0 + self.report.prepare_s
        return kept

    def cleanup(self) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


def crash_shown(longrepr: str, exception: str, path: str) -> bool:
    """True when a pytest traceback (``--tb=short``) ends in ``exception`` raised with a frame in
    ``path``: an ``E   NameError: ...`` line and a ``path:LINE: in ...`` location line."""
    raised = any(re.match(rf"E\s+(\w+\.)*{exception}\b", ln) for ln in longrepr.splitlines())
    located = re.search(rf"(^|[\s/]){re.escape(path)}:\d+: in ", longrepr, re.M) is not None
    return raised and located


def _snapshot(tree: Path, repo_dir: Path) -> ProjectRepo:
    """The project's snapshot repository, reused (with its earlier task branches) when the clean
    tree is unchanged, rebuilt otherwise."""
    repo_dir.parent.mkdir(parents=True, exist_ok=True)
    if (repo_dir / ".git").is_dir():
        fresh_dir = repo_dir.parent / f".{repo_dir.name}-check"
        fresh = ProjectRepo.create(tree, fresh_dir)
        try:
            existing = ProjectRepo.open(repo_dir)
            if existing.clean == fresh.clean:
                return existing
        except Exception:  # noqa: BLE001 - a broken repository is rebuilt
            pass
        finally:
            shutil.rmtree(fresh_dir, ignore_errors=True)
    return ProjectRepo.create(tree, repo_dir)


def task_test_cmd(spec: ProjectSpec) -> str | None:
    """The task's test command: pytest from the repository root with the project's own options.

    ``python`` is the task environment's interpreter (the workspace puts it first on PATH and the
    repository root, or ``src/``, on PYTHONPATH). ``None`` (the verifier's default) when the
    project needs no options and runs with the current interpreter.
    """
    import shlex

    opts = list(spec.profile.options)
    prefix = [] if spec.autoload_plugins else ["PYTEST_DISABLE_PLUGIN_AUTOLOAD=1"]
    if not opts and not prefix and spec.environment is None:
        return None
    return " ".join([*prefix, "python", "-m", "pytest", *(shlex.quote(o) for o in opts)])


# A patch that applies and changes no code: the verifier then runs the tests on the buggy tree
# (an empty patch would be rejected before any test runs).
NOOP_PATCH = """diff --git a/.swetrain-noop b/.swetrain-noop
new file mode 100644
index 0000000..8b13789
--- /dev/null
+++ b/.swetrain-noop
@@ -0,0 +1 @@
+
"""


class VerifierAcceptance:
    """Final acceptance through :class:`swetrain.env.verifier.Verifier`: on the buggy base (a no-op
    patch) the task must be unresolved with its FAIL_TO_PASS tests failing and PASS_TO_PASS
    passing, and the gold patch must resolve it ``verify_repeats`` times."""

    def __init__(self, config: SynthConfig):
        try:
            from swetrain.env.verifier import Verifier
        except ModuleNotFoundError as exc:
            raise SynthError("swetrain.env.verifier", f"the verifier is not available ({exc}); "
                             "rerun with --no-verify to skip the final acceptance") from None
        self.verifier = Verifier(timeout_s=config.verify_timeout_s)
        self.repeats = config.verify_repeats

    def __call__(self, task: Task) -> str | None:
        """None when accepted, else the rejection reason."""
        buggy = self.verifier.verify(task, NOOP_PATCH)
        if buggy.infra_failure or not buggy.patch_applied:
            return "verify_infra_failure"
        if buggy.resolved:
            return "verify_buggy_resolved"
        status = {r.test_id: r.status for r in buggy.tests}
        if any(status.get(t) == "PASSED" for t in task.FAIL_TO_PASS) or any(
                status.get(t) != "PASSED" for t in task.PASS_TO_PASS):
            return "verify_buggy_mismatch"
        for _ in range(self.repeats):
            gold = self.verifier.verify(task, task.patch)
            if gold.infra_failure:
                return "verify_infra_failure"
            if not gold.resolved:
                return "verify_gold_unresolved"
        return None
