"""Commands of the env layer: ``swetrain verify``, ``swetrain env tools``, ``swetrain env selfcheck``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

env_app = typer.Typer(help="Repository workspaces, agent tools and the verifier.", no_args_is_help=True)

SANDBOX_HELP = "Workspace backend: local (git working copy under bubblewrap) or docker (a container of the task's image)."


def check_sandbox_or_exit(sandbox: str, tasks: list) -> None:
    """One 'error: ...' line and exit 2 when the run cannot start on ``sandbox`` (unknown name,
    no Docker SDK or daemon, a task without an image, an image missing)."""
    from swetrain.env.backend import preflight
    from swetrain.env.workspace import WorkspaceError

    try:
        preflight(sandbox, tasks)
    except (ValueError, WorkspaceError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def use_sandbox(sandbox: str, tasks: list) -> None:
    """``--sandbox`` of eval/train/quickstart: check it (one error line, exit 2) and make it the
    process default, so every workspace and verifier the command builds uses it."""
    from swetrain.env.backend import set_default_sandbox

    check_sandbox_or_exit(sandbox, tasks)
    set_default_sandbox(sandbox)


def _load_task(tasks: Path, instance: str):
    from swetrain.tasks.builtin import BuiltinError, load_builtin
    from swetrain.tasks.record import TaskLoadError, get_task, load_tasks

    try:
        return get_task(load_builtin() if str(tasks) == "builtin" else load_tasks(tasks), instance)
    except (TaskLoadError, BuiltinError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except KeyError as exc:
        typer.echo(f"error: {tasks}: {exc.args[0]}", err=True)
        raise typer.Exit(2) from None


def verify(
    tasks: Path = typer.Option(..., "--tasks", help="Tasks file (JSONL, JSON or Parquet) or 'builtin'."),
    instance: str = typer.Option(..., "--instance", help="instance_id of the task."),
    patch: Path = typer.Option(..., "--patch", help="Patch file (unified/git diff); '-' reads stdin."),
    as_json: bool = typer.Option(False, "--json", help="Print the Verdict as one JSON object."),
    timeout: float = typer.Option(300.0, "--timeout", help="Limit for the whole test run, seconds."),
    test_timeout: float = typer.Option(60.0, "--test-timeout", help="Limit per test, seconds (0 = none)."),
    sandbox: str = typer.Option("local", "--sandbox", help=SANDBOX_HELP),
) -> None:
    """Judge a patch on a task. Exit 0 whenever a verdict was reached, however bad the patch; 3 on an
    infrastructure failure (no verdict); 2 on bad input."""
    from swetrain.env.verifier import Verifier

    from swetrain.env.backend import announce_isolation

    task = _load_task(tasks, instance)
    check_sandbox_or_exit(sandbox, [task])
    announce_isolation(sandbox=sandbox)
    if str(patch) == "-":
        text = sys.stdin.read()
    else:
        try:
            text = patch.read_bytes().decode("utf-8", errors="surrogateescape")
        except OSError as exc:
            typer.echo(f"error: cannot read patch file {patch}: {exc.strerror}", err=True)
            raise typer.Exit(2) from None
    verdict = Verifier(timeout_s=timeout, test_timeout_s=test_timeout, sandbox=sandbox).verify(task, text)
    if as_json:
        typer.echo(verdict.model_dump_json())
    else:
        typer.echo(f"{verdict.instance_id}: {verdict.status} (resolved={verdict.resolved}, "
                   f"patch_applied={verdict.patch_applied}, infra_failure={verdict.infra_failure})")
        for t in verdict.tests:
            typer.echo(f"  {t.status:8s} {t.kind:12s} {t.test_id}")
        if verdict.diagnostics:
            typer.echo("\n" + verdict.diagnostics)
    if verdict.infra_failure:  # no verdict on the patch was reached: not a success of the command
        hint = (f"; task {task.instance_id} names the Docker image {task.image}: add --sandbox docker"
                if task.image and sandbox != "docker" else "")
        typer.echo(f"error: infrastructure failure, the patch was not judged: {verdict.infra_reason}{hint}", err=True)
        raise typer.Exit(3)


@env_app.command("tools")
def tools(
    tasks: Path = typer.Option(..., "--tasks", help="Tasks file (JSONL, JSON or Parquet) or 'builtin'."),
    instance: str = typer.Option(..., "--instance", help="instance_id of the task."),
    timeout: float = typer.Option(120.0, "--timeout", help="Limit per execute_bash command, seconds."),
    no_verify: bool = typer.Option(False, "--no-verify", help="After finish, print the patch without verifying it."),
    sandbox: str = typer.Option("local", "--sandbox", help=SANDBOX_HELP),
) -> None:
    """Agent interface over stdin/stdout: one JSON tool call per line in, one JSON result per line out.

    Input lines: {"name": "file_editor", "arguments": {...}}. Output lines: {"observation": str,
    "ok": bool}. After ``finish`` (or end of input) it prints {"patch": str, "verdict": {...}} and
    exits; every process the workspace started is killed.
    """
    from swetrain.env.tools import ToolRunner
    from swetrain.env.verifier import Verifier
    from swetrain.env.backend import open_workspace
    from swetrain.env.workspace import Limits, WorkspaceError

    from swetrain.env.backend import announce_isolation

    task = _load_task(tasks, instance)
    check_sandbox_or_exit(sandbox, [task])
    announce_isolation(sandbox=sandbox)
    try:
        ws = open_workspace(task, sandbox=sandbox, limits=Limits(timeout_s=timeout))
    except WorkspaceError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        runner = ToolRunner(ws)
        for raw in sys.stdin:
            if not raw.strip():
                continue
            try:
                call = json.loads(raw)
                if not isinstance(call, dict):
                    raise ValueError("a tool call must be a JSON object")
                result = runner.call(call.get("name"), call.get("arguments", {}))
            except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError; deep nesting recurses
                typer.echo(json.dumps({"observation": f"Error: invalid tool call line: {exc}", "ok": False}))
                continue
            typer.echo(json.dumps({"observation": result.observation, "ok": result.ok}), nl=True)
            sys.stdout.flush()
            if result.done:
                break
        patch = ws.diff()
    finally:
        ws.close()
    verdict = None if no_verify else Verifier(sandbox=sandbox).verify(task, patch).model_dump(mode="json")
    typer.echo(json.dumps({"patch": patch, "verdict": verdict}))


@env_app.command("selfcheck")
def selfcheck(
    keep: bool = typer.Option(False, "--keep", help="Keep the temporary task folder."),
) -> None:
    """Build a small real task, break and fix it through the agent tools, verify both attempts."""
    import shutil
    import tempfile
    import time

    from swetrain.env.demo import build_demo_task
    from swetrain.env.sandbox import isolation_note
    from swetrain.env.tools import ToolRunner
    from swetrain.env.verifier import Verifier
    from swetrain.env.workspace import Workspace, WorkspaceError

    import os

    folder = Path(tempfile.mkdtemp(prefix="swetrain-selfcheck-"))
    ok = True
    old_home = os.environ.get("SWETRAIN_HOME")
    os.environ["SWETRAIN_HOME"] = str(folder / "home")  # the pristine snapshot goes away with the folder

    def step(msg: str) -> None:
        typer.echo(f"[selfcheck] {msg}")

    try:
        step(isolation_note())
        task = build_demo_task(folder)
        step(f"built task {task.instance_id} in {folder} (base {task.base_commit[:10]}, "
             f"F2P={len(task.FAIL_TO_PASS)}, P2P={len(task.PASS_TO_PASS)})")
        verifier = Verifier(timeout_s=120, test_timeout_s=20)
        with Workspace.create(task) as ws:
            tools = ToolRunner(ws)
            step(f"workspace at {ws.path} (agent sees {ws.agent_root})")
            # attempt 1: a wrong fix (subtracts)
            r = tools.call("file_editor", {"command": "str_replace", "path": "calc/__init__.py",
                                           "old_str": "return a + b  # bug: should multiply", "new_str": "return a - b"})
            step(f"attempt 1: file_editor str_replace -> ok={r.ok}")
            tools.call("execute_bash", {"cmd": "sleep 600 &"})
            v1 = verifier.verify(task, ws.diff())
            step(f"attempt 1 verdict: {v1.status} (resolved={v1.resolved}); diagnostics first line: "
                 f"{v1.diagnostics.splitlines()[0] if v1.diagnostics else ''}")
            ok &= v1.status == "NO" and not v1.infra_failure
            t0 = time.perf_counter()
            fixed = ws.reset()
            step(f"reset in {1000 * (time.perf_counter() - t0):.1f} ms ({fixed} entries repaired); "
                 f"diff now empty: {ws.diff() == ''}")
            ok &= ws.diff() == ""
            # attempt 2: the right fix, checked with the tools first
            r = tools.call("search", {"search_term": "def mul"})
            step(f"attempt 2: search 'def mul' -> {r.observation.splitlines()[-1]}")
            r = tools.call("file_editor", {"command": "str_replace", "path": "calc/__init__.py",
                                           "old_str": "return a + b  # bug: should multiply", "new_str": "return a * b"})
            r = tools.call("execute_bash", {"cmd": "python -c 'from calc import mul; print(mul(3, 4))'"})
            step(f"attempt 2: mul(3, 4) -> {r.observation.splitlines()[0]}")
            r = tools.call("finish", {"command": "submit"})
            v2 = verifier.verify(task, ws.diff())
            step(f"attempt 2 verdict: {v2.status} (resolved={v2.resolved}, applied with {v2.apply_method}, "
                 f"{v2.duration_s:.1f}s)")
            ok &= v2.resolved and r.done
    except WorkspaceError as exc:  # the task environment or the sandbox cannot run: say so, FAIL
        step(f"error: {exc}")
        ok = False
    try:
        step("PASS" if ok else "FAIL")
    finally:
        if old_home is None:
            os.environ.pop("SWETRAIN_HOME", None)
        else:
            os.environ["SWETRAIN_HOME"] = old_home
        if keep:
            step(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    if not ok:
        raise typer.Exit(1)


def _load_task_list(spec: str, limit: int, seed: int) -> list:
    """Tasks of ``spec`` (a tasks file, or ``builtin``); with ``limit``, a seeded sample of them."""
    import random

    from swetrain.tasks.builtin import BuiltinError, load_builtin
    from swetrain.tasks.record import TaskLoadError, load_tasks

    try:
        tasks = load_builtin() if spec == "builtin" else load_tasks(spec)
    except (TaskLoadError, BuiltinError, ValueError, OSError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--tasks") from None
    if not tasks:
        raise typer.BadParameter(f"no tasks in {spec!r}", param_hint="--tasks")
    tasks = sorted(tasks, key=lambda t: t.instance_id)
    if limit:
        random.Random(seed).shuffle(tasks)
        tasks = sorted(tasks[:limit], key=lambda t: t.instance_id)
    return tasks


@env_app.command("audit")
def audit(
    tasks: str = typer.Option(..., "--tasks", help="Tasks file (JSONL, JSON or Parquet) or 'builtin'."),
    limit: int = typer.Option(0, "--limit", min=0, help="Audit a seeded sample of this many tasks (0 = all)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the --limit sample."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
    sandbox: str = typer.Option("local", "--sandbox", help=SANDBOX_HELP),
) -> None:
    """Search each task's sandbox, as the agent sees it, for the task's answer.

    Looks in every readable file, every reachable git object (history, other refs, alternates)
    and the environment variables for the gold patch's added lines and the hidden test changes.
    Exit 0 when nothing is found, 1 on any hit or a task that could not be audited, 2 for bad input.
    """
    from rich.progress import Progress

    from swetrain.env.audit import audit_tasks
    from swetrain.env.backend import announce_isolation

    chosen = _load_task_list(tasks, limit, seed)
    check_sandbox_or_exit(sandbox, chosen)
    announce_isolation(sandbox=sandbox)
    with Progress(transient=True, disable=as_json) as bar:
        job = bar.add_task(f"auditing {len(chosen)} task(s)", total=len(chosen))
        report = audit_tasks(chosen, on_task=lambda _a: bar.advance(job), sandbox=sandbox)
    summary = report.summary()
    if as_json:
        typer.echo(json.dumps({"summary": summary, "tasks": [t.model_dump(mode="json") for t in report.tasks]}))
    else:
        for t in report.tasks:
            state = "clean" if t.clean else ("ERROR " + (t.error or "") if t.error else f"LEAK ({len(t.hits)} hits)")
            typer.echo(f"{t.instance_id}: {state} ({t.needles} needles)")
            for h in t.hits:
                typer.echo(f"    {h.kind}/{h.form} of {h.file} found by {h.how} at {h.where}: {h.needle.splitlines()[0]!r}")
        typer.echo(f"{summary['tasks']} tasks: {summary['clean']} clean, {summary['leaking']} leaking, "
                   f"{summary['errors']} not audited")
    if not report.clean:
        raise typer.Exit(1)


@env_app.command("build-image")
def build_image(
    tasks: str = typer.Option(..., "--tasks", help="Tasks file (JSONL, JSON or Parquet) or 'builtin'."),
    out: Path = typer.Option(..., "--out", help="Tasks file to write: the same tasks with environment=docker://IMAGE."),
    limit: int = typer.Option(0, "--limit", min=0, help="Only a seeded sample of this many tasks (0 = all)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the --limit sample."),
    mirror: str = typer.Option("", "--mirror", help="Debian mirror for the base image (default: the one apt uses)."),
) -> None:
    """Build local Docker images for tasks (Debian minbase + python3 + pytest + the repository at
    /testbed), cached by content hash, and write the tasks with their images. No registry needed."""
    from swetrain.env.docker_client import DockerUnavailable
    from swetrain.env.images import build_images
    from swetrain.env.workspace import WorkspaceError
    from swetrain.tasks.record import save_tasks

    chosen = _load_task_list(tasks, limit, seed)
    try:
        done, counts = build_images(chosen, mirror=mirror or None, log=lambda m: typer.echo(m, err=True))
    except (DockerUnavailable, WorkspaceError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    save_tasks(done, out)
    typer.echo(f"{len(done)} task(s) -> {out} (base {counts['base']}; images built {counts['built']}, "
               f"cached {counts['reused']}, already set {counts['kept']})")


@env_app.command("redteam")
def redteam(
    tasks: str = typer.Option(..., "--tasks", help="Tasks file (JSONL, JSON or Parquet) or 'builtin'."),
    limit: int = typer.Option(0, "--limit", min=0, help="Attack a seeded sample of this many tasks (0 = all)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the --limit sample."),
    family: str = typer.Option("", "--family", help="Comma-separated families to run (default: all)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
    sandbox: str = typer.Option("local", "--sandbox", help=SANDBOX_HELP),
    timeout: float = typer.Option(30.0, "--timeout", help="Limit for one verifier test run, seconds (the hang attack waits for it)."),
    legacy: bool = typer.Option(False, "--legacy-verifier", help="Attack the verifier as it was before issue 30 "
                                "(a planted regression: expect exit 1)."),
) -> None:
    """Run a library of attack patches (generated per task) against the verifier.

    Families: prefix, shadow, monkeypatch, xfail, special-case, report-link, unscored, empty-f2p
    (issue 30). An attack is blocked when its verdict is neither resolved nor an infrastructure
    failure. Exit 0 when every attack is blocked, 1 when any succeeds, 2 for bad input.
    """
    from swetrain.env.redteam import FAMILIES, report_json, run_redteam
    from swetrain.env.backend import announce_isolation
    from swetrain.env.verifier import Verifier

    chosen = _load_task_list(tasks, limit, seed)
    families = {f.strip() for f in family.split(",") if f.strip()}
    unknown = families - set(FAMILIES.values())
    if unknown:
        raise typer.BadParameter(f"unknown families {sorted(unknown)}; known: {', '.join(FAMILIES.values())}",
                                 param_hint="--family")
    check_sandbox_or_exit(sandbox, chosen)
    announce_isolation(sandbox=sandbox)
    verifier = Verifier(timeout_s=timeout, test_timeout_s=min(20.0, timeout), sandbox=sandbox, hardened=not legacy)

    def show(r) -> None:
        if not as_json:
            typer.echo(f"{r.instance_id}  {r.family:12s} {'blocked  ' if r.blocked else 'SUCCEEDED'} "
                       f"{r.status:8s} {r.variant} ({r.seconds:.1f}s){'' if r.blocked else ': ' + r.why[:160]}")

    report = run_redteam(chosen, verifier, on_result=show, families=families or None)
    if as_json:
        typer.echo(report_json(report))
    else:
        for name, counts in report.by_family().items():
            typer.echo(f"{name:12s} blocked {counts['blocked']:3d}  succeeded {counts['succeeded']:3d}")
        typer.echo(f"{len(report.results)} attacks on {len(chosen)} task(s): "
                   + ("all blocked" if report.ok else "SOME SUCCEEDED"))
    if not report.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``verify`` (top level) and the ``env`` group to the swetrain command."""
    app.command("verify")(verify)
    app.add_typer(env_app, name="env")
