"""The task record: SWE-bench's fields plus where the repository lives, how to test it, labels, route.

``load_tasks`` reads our JSONL, SWE-bench rows (FAIL_TO_PASS / PASS_TO_PASS as JSON-encoded strings
or lists), JSON arrays and Parquet; ``save_tasks`` writes JSONL or Parquet and round-trips.
A malformed row raises :class:`TaskLoadError` naming the file, the line (1-based) and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

Route = Literal["A", "B", "C"]


class TaskLoadError(ValueError):
    """A task file or one of its rows could not be read. Names file, line and field."""

    def __init__(self, path: str | Path, line: int | None, field: str | None, message: str):
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        where = self.path + (f":{line}" if line is not None else "")
        what = f" field {field!r}" if field else ""
        super().__init__(f"{where}:{what} {message}".replace(": ", ": ", 1))


def _decode_test_list(value: Any) -> list[str]:
    """SWE-bench stores FAIL_TO_PASS/PASS_TO_PASS as JSON-encoded strings; we accept lists too."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a JSON list of test ids: {exc.msg}") from None
    if hasattr(value, "tolist"):  # numpy / pyarrow arrays from Parquet
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"expected a list of test ids, got {type(value).__name__}")
    out = []
    for item in value:
        if not isinstance(item, str):
            raise ValueError(f"test ids must be strings, got {type(item).__name__}")
        out.append(item)
    return out


class Task(BaseModel):
    """One SWE task: a repository at a base commit, an issue, and the tests that judge a patch.

    Field names of SWE-bench are kept verbatim. ``source`` names the repository snapshot (a local
    git repository containing ``base_commit``; relative paths are resolved against the tasks
    file's folder by :meth:`source_path`). ``environment`` optionally names a reusable virtual
    environment whose interpreter runs the tests. ``test_cmd`` defaults to pytest from the
    repository root.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    instance_id: str = Field(min_length=1)
    repo: str = ""
    base_commit: str = ""
    problem_statement: str = ""
    patch: str = ""
    test_patch: str = ""
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    version: str | None = None
    environment_setup_commit: str | None = None
    hints_text: str = ""
    created_at: str | None = None
    # swetrain additions
    source: str | None = None
    environment: str | None = None
    test_cmd: str | None = None
    labels: dict[str, Any] | None = None
    route: Route | None = None
    split: str | None = None

    _base_dir: Path | None = PrivateAttr(default=None)

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _tests(cls, value: Any) -> list[str]:
        return _decode_test_list(value)

    @field_validator("version", "environment_setup_commit", "created_at", mode="before")
    @classmethod
    def _stringish(cls, value: Any) -> str | None:
        return None if value is None else str(value)

    @field_validator("labels", mode="before")
    @classmethod
    def _labels(cls, value: Any) -> Any:
        if isinstance(value, str):  # Parquet stores the free-form dict as JSON text
            return json.loads(value) if value.strip() else None
        return value

    @field_validator("route", mode="before")
    @classmethod
    def _route(cls, value: Any) -> Any:
        return None if value in ("", "null", "None") else value

    @property
    def tests(self) -> list[str]:
        """FAIL_TO_PASS ∪ PASS_TO_PASS, in that order, without duplicates."""
        return list(dict.fromkeys([*self.FAIL_TO_PASS, *self.PASS_TO_PASS]))

    def with_base_dir(self, base_dir: str | Path | None) -> Task:
        self._base_dir = Path(base_dir).resolve() if base_dir is not None else None
        return self

    def _resolve(self, value: str | None) -> Path | None:
        if not value:
            return None
        path = Path(value).expanduser()
        if not path.is_absolute() and self._base_dir is not None:
            path = self._base_dir / path
        return path.resolve()

    def source_path(self) -> Path | None:
        """Absolute path of the repository snapshot, or None when the task names none."""
        return self._resolve(self.source)

    def environment_path(self) -> Path | None:
        """Absolute path of the task's reusable virtual environment, or None (also when
        ``environment`` names a Docker image, ``docker://IMAGE``: see :attr:`image`)."""
        if self.image is not None:
            return None
        return self._resolve(self.environment)

    @property
    def image(self) -> str | None:
        """The Docker image of the task when ``environment`` is ``docker://IMAGE`` (the docker
        sandbox also takes a bare image name there)."""
        env = (self.environment or "").strip()
        return env[len("docker://") :] if env.startswith("docker://") else None

    def to_row(self) -> dict[str, Any]:
        """A JSON-serialisable dict (SWE-bench field names, lists kept as lists)."""
        return self.model_dump(mode="json")


def _parse_row(row: Any, path: Path, line: int) -> Task:
    if not isinstance(row, dict):
        raise TaskLoadError(path, line, None, f"expected a JSON object, got {type(row).__name__}")
    try:
        task = Task.model_validate(row)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err.get("loc", ())) or None
        msg = err.get("msg", "invalid value")
        raise TaskLoadError(path, line, field, msg) from None
    return task.with_base_dir(path.parent)


def iter_task_rows(path: str | Path) -> Iterable[tuple[int, Any]]:
    """Yield (line, raw row) pairs from JSONL, JSON array or Parquet; line is 1-based."""
    path = Path(path)
    if not path.exists():
        raise TaskLoadError(path, None, None, "file does not exist")
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # noqa: BLE001 - report any reader failure with the file name
            raise TaskLoadError(path, None, None, f"not a readable Parquet file: {exc}") from None
        for i, row in enumerate(table.to_pylist(), start=1):
            yield i, row
        return
    text = path.read_text(encoding="utf-8")
    if suffix == ".json" and text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TaskLoadError(path, exc.lineno, None, f"invalid JSON: {exc.msg}") from None
        except RecursionError:
            raise TaskLoadError(path, None, None, "invalid JSON: nested too deeply") from None
        for i, row in enumerate(rows, start=1):
            yield i, row
        return
    for i, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise TaskLoadError(path, i, None, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
        except RecursionError:
            raise TaskLoadError(path, i, None, "invalid JSON: nested too deeply") from None
        yield i, row


def ungradable_reason(task: Task) -> tuple[str, str] | None:
    """(field, why) when the verifier could not grade ``task`` honestly, else None.

    A row without FAIL_TO_PASS tests would be FULL for any patch that keeps PASS_TO_PASS passing
    (0 of 0 tests to fix: a no-op patch earns the reward); a test listed twice, or both as
    FAIL_TO_PASS and PASS_TO_PASS, makes the grading ambiguous.
    """
    if not task.FAIL_TO_PASS:
        return "FAIL_TO_PASS", "is empty: the task cannot be graded (a no-op patch would be FULL)"
    for field in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        ids = getattr(task, field)
        dups = sorted({t for t in ids if ids.count(t) > 1})
        if dups:
            return field, f"lists {dups[0]!r} more than once"
        blank = [t for t in ids if not t.strip()]
        if blank:
            return field, "holds an empty test id"
    both = sorted(set(task.FAIL_TO_PASS) & set(task.PASS_TO_PASS))
    if both:
        return "PASS_TO_PASS", f"lists {both[0]!r}, which is also a FAIL_TO_PASS test"
    return None


def load_tasks(path: str | Path, *, gradable: bool = True) -> list[Task]:
    """Load tasks from JSONL / JSON / Parquet. Raises TaskLoadError on the first bad row.

    Duplicate ``instance_id`` values are an error too (they would make results ambiguous). With
    ``gradable`` (the default) a row the verifier cannot grade honestly is refused too
    (:func:`ungradable_reason`: empty FAIL_TO_PASS, a test id listed twice); pass
    ``gradable=False`` to read rows that are not meant to be verified.
    """
    path = Path(path)
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for line, row in iter_task_rows(path):
        task = _parse_row(row, path, line)
        if gradable:
            bad = ungradable_reason(task)
            if bad is not None:
                raise TaskLoadError(path, line, bad[0], f"{bad[1]} (task {task.instance_id!r})")
        if task.instance_id in seen:
            raise TaskLoadError(
                path, line, "instance_id", f"duplicate {task.instance_id!r} (first on line {seen[task.instance_id]})"
            )
        seen[task.instance_id] = line
        tasks.append(task)
    return tasks


def save_tasks(tasks: Sequence[Task], path: str | Path) -> Path:
    """Write tasks as JSONL (default) or Parquet (``.parquet``), atomically (no half-written file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    rows = [t.to_row() for t in tasks]
    if path.suffix.lower() == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        for r in rows:  # nested free-form dicts go as JSON text so the schema stays stable
            r["labels"] = json.dumps(r["labels"]) if r.get("labels") is not None else None
        pq.write_table(pa.Table.from_pylist(rows), tmp)
    else:
        with tmp.open("w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def task_tier(task: Task) -> str:
    """The task's difficulty tier for grouping: ``labels["tier"]`` (``"easy"`` for the synthesized
    crash kinds), ``"standard"`` for every row without one (the rows written before tiers)."""
    tier = (task.labels or {}).get("tier")
    return tier if isinstance(tier, str) and tier else "standard"


def get_task(tasks: Sequence[Task], instance_id: str) -> Task:
    for t in tasks:
        if t.instance_id == instance_id:
            return t
    raise KeyError(f"no task with instance_id {instance_id!r} ({len(tasks)} tasks loaded)")
