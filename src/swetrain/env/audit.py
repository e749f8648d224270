"""The leak audit: can the agent read the answer from inside its sandbox?

For each task, the answer is what the gold patch adds and what the hidden test patch changes.
:func:`patch_needles` turns both into *needles*, per contiguous change of a hunk:

- ``source``: the new side of the change with one context line either side (what a copy of the
  fixed file, or a git blob of it, contains);
- ``diff``: the diff lines themselves with their ``+``/``-`` marks (a patch file);
- ``json``: the diff lines JSON-escaped (a tasks file or a trajectory record holding the patch).

A needle that already occurs in the task's initial repository tells the agent nothing and is
dropped. :func:`audit_tasks` then opens each task's workspace as the agent gets it and runs
:mod:`swetrain.env.audit_scan` *inside the sandbox*: every readable file, the decompressed objects
of every git object store it can reach (alternates included), and the environment variables.
The system runtime that every sandbox shares is scanned once per audit with every task's needles;
each task's own view (``/testbed``, ``/tmp``, environment) is scanned with its own.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from swetrain.env.backend import open_workspace
from swetrain.env.interface import Limits, WorkspaceBackend, WorkspaceError
from swetrain.env.workspace import pristine_snapshot
from swetrain.tasks.record import Task

__all__ = ["AuditHit", "AuditReport", "Needle", "TaskAudit", "audit_tasks", "patch_needles"]

SCANNER = Path(__file__).resolve().parent / "audit_scan.py"
MIN_ANCHOR_CHARS = 6  # a needle whose longest line is shorter than this is too common to mean anything
_AUDIT_LIMITS = Limits(timeout_s=3600, cpu_s=3600, memory_bytes=16 << 30, output_head_chars=64 << 20,
                       output_tail_chars=0)


@dataclass(frozen=True)
class Needle:
    id: int
    instance_id: str
    kind: str  # "gold" (the fix) or "test" (the hidden test changes)
    form: str  # "source", "diff" or "json"
    file: str
    text: str
    anchor: str  # one line of ``text`` that grep looks for first

    def request(self) -> dict:
        return {"id": self.id, "text": self.text, "anchor": self.anchor}


class AuditHit(BaseModel):
    kind: str
    form: str
    file: str = Field(description="file of the patch the needle comes from")
    where: str = Field(description="where inside the sandbox it was found")
    how: str = Field(description="file, git or env")
    needle: str = Field(description="the first 120 characters of the needle")


class TaskAudit(BaseModel):
    instance_id: str
    isolated: bool | None = None
    needles: int = 0
    visible: list[str] = Field(default_factory=list, description="top-level folders the sandbox shows")
    hits: list[AuditHit] = Field(default_factory=list)
    error: str | None = None

    @property
    def clean(self) -> bool:
        return not self.hits and self.error is None


class AuditReport(BaseModel):
    tasks: list[TaskAudit]

    @property
    def clean(self) -> bool:
        return all(t.clean for t in self.tasks)

    def summary(self) -> dict:
        return {
            "tasks": len(self.tasks),
            "clean": sum(t.clean for t in self.tasks),
            "leaking": sum(bool(t.hits) for t in self.tasks),
            "errors": sum(t.error is not None for t in self.tasks),
            "hits": sum(len(t.hits) for t in self.tasks),
        }


# ------------------------------------------------------------------------------------- needles


def _change_groups(hunk) -> Iterable[tuple[list, list, list]]:
    """(context before, changed lines, context after) for each run of +/- lines in a hunk."""
    lines = list(hunk)
    i = 0
    while i < len(lines):
        if lines[i].is_context:
            i += 1
            continue
        j = i
        while j < len(lines) and not lines[j].is_context:
            j += 1
        yield lines[max(0, i - 1):i], lines[i:j], lines[j:j + 1]
        i = j


def _anchor(text: str) -> str:
    return max(text.split("\n"), key=lambda s: len(s.strip()))


def patch_needles(task: Task, base_corpus: bytes, start_id: int = 0) -> list[Needle]:
    """Needles for ``task``'s gold patch and test patch (see the module doc).

    ``base_corpus`` is every file of the task's initial repository, concatenated: a needle found
    in it is already visible to the agent and is dropped.
    """
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    out: list[Needle] = []
    for kind, text in (("gold", task.patch), ("test", task.test_patch)):
        if not text.strip():
            continue
        try:
            patch = PatchSet(text)
        except UnidiffParseError as exc:
            raise ValueError(f"task {task.instance_id!r}: its {kind} patch is not a unified diff: {exc}") from None
        for pf in patch:
            if pf.is_binary_file:
                continue
            for hunk in pf:
                for before, changed, after in _change_groups(hunk):
                    added = [ln for ln in changed if ln.is_added]
                    source_lines = [ln.value.rstrip("\n") for ln in before + added + after]
                    diff = "\n".join(str(ln).rstrip("\n") for ln in before + changed)
                    forms = [("diff", diff), ("json", json.dumps(diff)[1:-1]),
                             ("json", json.dumps(diff, ensure_ascii=False)[1:-1])]
                    if added:
                        forms.insert(0, ("source", "\n".join(source_lines)))
                    seen: set[str] = set()
                    for form, needle in forms:
                        if needle in seen:
                            continue
                        seen.add(needle)
                        anchor = needle if form == "json" else _anchor(needle)
                        if len(anchor.strip()) < MIN_ANCHOR_CHARS:
                            continue
                        if needle.encode("utf-8", "surrogateescape") in base_corpus:
                            continue
                        out.append(Needle(start_id + len(out), task.instance_id, kind, form, pf.path, needle, anchor))
    return out


def base_corpus(pristine: Path) -> bytes:
    """Every file of a task's initial tree (its pristine snapshot, ``.git`` aside)."""
    chunks = []
    for path in sorted(pristine.rglob("*")):
        if ".git" in path.relative_to(pristine).parts or not path.is_file() or path.is_symlink():
            continue
        try:
            chunks.append(path.read_bytes())
        except OSError:
            continue
    return b"\n\0\n".join(chunks)


# ---------------------------------------------------------------------------------------- scan


def _scan(ws: WorkspaceBackend, request: dict) -> list[dict]:
    """Run the scanner in ``ws``'s sandbox with ``request``; its JSON lines."""
    cmd = f"python -c {shlex.quote(SCANNER.read_text())}"
    res = ws.run(cmd, timeout=_AUDIT_LIMITS.timeout_s, stdin=json.dumps(request).encode())
    rows = []
    for line in res.output.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    if res.timed_out or not rows or not any("done" in r or "visible" in r for r in rows):
        raise WorkspaceError(f"the audit scanner failed in the sandbox (exit {res.returncode}): {res.output[-800:]}")
    return rows


def audit_tasks(
    tasks: Sequence[Task],
    *,
    isolated: bool | None = None,
    prepare: Callable[[WorkspaceBackend], None] | None = None,
    on_task: Callable[[TaskAudit], None] | None = None,
    scan_runtime: bool = True,
    sandbox: str = "local",
) -> AuditReport:
    """Audit each task's sandbox for its answer (see the module doc).

    ``prepare(ws)`` runs on each workspace before the scan (tests use it to plant a leak).
    ``on_task`` is called with each task's result as it is done (progress).
    ``scan_runtime=False`` skips the system runtime and the interpreter, which every sandbox
    shares (about a minute to read here); everything else is still scanned.
    ``sandbox="docker"`` audits a container of each task's image instead: every visible folder
    of it (``/proc``, ``/sys``, ``/dev`` aside), its git objects and environment.
    """
    needles: list[Needle] = []
    errors: dict[str, str] = {}
    for task in tasks:  # every task's needles first: the shared runtime is scanned with all of them
        try:
            needles.extend(patch_needles(task, base_corpus(pristine_snapshot(task)), start_id=len(needles)))
        except (WorkspaceError, ValueError, OSError) as exc:
            errors[task.instance_id] = str(exc)
    by_id = {n.id: n for n in needles}
    shared_hits: dict[str, list[dict]] = {}  # shared root scanned -> its hits
    results = []
    for task in tasks:
        audit = TaskAudit(instance_id=task.instance_id, error=errors.get(task.instance_id))
        if audit.error is None:
            try:
                with open_workspace(task, sandbox=sandbox, limits=_AUDIT_LIMITS, isolated=isolated, one_shot=True) as ws:
                    _audit_one(task, ws, needles, by_id, shared_hits, audit, prepare, scan_runtime)
            except (WorkspaceError, OSError) as exc:
                audit.error = str(exc)
        results.append(audit)
        if on_task is not None:
            on_task(audit)
    return AuditReport(tasks=results)


def _audit_one(task: Task, ws: WorkspaceBackend, needles: list[Needle], by_id: dict[int, Needle],
               shared_hits: dict[str, list[dict]], audit: TaskAudit,
               prepare: Callable[[WorkspaceBackend], None] | None, scan_runtime: bool) -> None:
    """Scan what ``ws``'s sandbox shows: its shared folders (:meth:`WorkspaceBackend.shared_roots`)
    once per audit with every task's needles, its own folders with this task's needles."""
    if prepare is not None:
        prepare(ws)
    mine = [n for n in needles if n.instance_id == task.instance_id]
    audit.isolated = ws.isolated
    audit.needles = len(mine)
    audit.visible = _scan(ws, {"mode": "list"})[0]["visible"]
    if not ws.isolated:
        audit.error = ("not isolated (bubblewrap unavailable): the agent can read every file of the host, "
                       "the answer included; install bubblewrap")
    roots = ws.shared_roots(audit.visible, runtime=scan_runtime)
    todo = [r for r in roots if r not in shared_hits]
    if todo:  # shared folders not scanned yet: once, with every task's needles
        rows = _scan(ws, {"mode": "scan", "roots": todo, "git": True, "env": False,
                          "needles": [n.request() for n in needles]})
        for root in todo:
            shared_hits[root] = [r for r in rows if "needle" in r and _under(r["where"], root)]
    hits = [hit for root in roots for hit in shared_hits[root]]
    rows = _scan(ws, {"mode": "scan", "roots": ws.own_roots(audit.visible), "git": True, "env": True,
                      "needles": [n.request() for n in mine]})
    hits += [r for r in rows if "needle" in r]
    seen = set()
    for r in hits:
        n = by_id[r["needle"]]
        if n.instance_id != task.instance_id or (n.id, r["where"]) in seen:
            continue
        seen.add((n.id, r["where"]))
        audit.hits.append(AuditHit(kind=n.kind, form=n.form, file=n.file, where=r["where"], how=r["how"],
                                   needle=n.text[:120]))


def _under(where: str, root: str) -> bool:
    """A hit's place (a path, or 'git object ... in GITDIR') lies below ``root``."""
    path = where.rsplit(" in ", 1)[-1] if where.startswith("git object ") else where
    return path == root or path.startswith(root.rstrip("/") + "/")
