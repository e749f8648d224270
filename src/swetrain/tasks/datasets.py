"""Rows of the public SWE training corpora as tasks for the docker sandbox.

SWE-bench (full / Verified / Lite), SWE-Gym, SWE-smith and R2E-Gym each ship a task as a Docker
image with the repository at ``/testbed`` and its environment installed. :func:`load_dataset`
reads a JSONL / JSON / Parquet export of their dataset rows and gives :class:`Task` records with

- ``environment = docker://IMAGE`` following each corpus's image naming convention
  (:func:`image_name`), so ``--sandbox docker`` runs them; ``source`` stays empty (the repository
  lives only in the image);
- ``test_cmd``: the command the verifier extends with pytest's node ids and junit options: the
  images' conda environment ``testbed`` activated, then pytest. Where the ``swebench`` package is
  installed its per-repository spec decides (a spec whose test command is not pytest, e.g.
  Django's ``runtests.py`` or SymPy's ``bin/test``, cannot report junit: those rows are marked
  ``labels.dataset.pytest = false`` and the verifier will report them as infra failures).

Conventions (as the corpora publish them; an image missing locally gives one line naming it and
the ``docker pull`` that fetches it):

| corpus | image | tests |
|---|---|---|
| SWE-bench | ``swebench/sweb.eval.x86_64.<id, lower-case, "__" -> "_1776_">:latest`` | FAIL_TO_PASS / PASS_TO_PASS |
| SWE-Gym | ``xingyaoww/sweb.eval.x86_64.<id, lower-case, "__" -> "_s_">:latest`` | FAIL_TO_PASS / PASS_TO_PASS |
| SWE-smith | the row's ``image_name`` | FAIL_TO_PASS / PASS_TO_PASS |
| R2E-Gym | the row's ``docker_image`` | FAIL_TO_PASS / PASS_TO_PASS when present, else every test ``expected_output_json`` expects to pass counts as must-pass |
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swetrain.tasks.record import Task, TaskLoadError, iter_task_rows

DATASETS = ("swebench", "swe-gym", "swe-smith", "r2e-gym")
CONDA_ACTIVATE = "source /opt/miniconda3/bin/activate && conda activate testbed && "
PYTEST = "python -m pytest"


def image_name(dataset: str, row: dict[str, Any], *, arch: str = "x86_64", tag: str = "latest") -> str:
    """The Docker image a row runs in, by its corpus's convention."""
    iid = str(row.get("instance_id", ""))
    if dataset == "swebench":
        return f"swebench/sweb.eval.{arch}.{iid.lower().replace('__', '_1776_')}:{tag}"
    if dataset == "swe-gym":
        return f"xingyaoww/sweb.eval.{arch}.{iid.lower().replace('__', '_s_')}:{tag}"
    if dataset == "swe-smith":
        name = row.get("image_name")
        if not name:
            raise ValueError("SWE-smith row without 'image_name'")
        return str(name)
    if dataset == "r2e-gym":
        name = row.get("docker_image")
        if not name:
            raise ValueError("R2E-Gym row without 'docker_image'")
        return str(name)
    raise ValueError(f"dataset {dataset!r} is not one of {', '.join(DATASETS)}")


def swebench_test_cmd(repo: str, version: str | None) -> tuple[str, bool]:
    """(test command, runs pytest) for a SWE-bench-family row: the ``swebench`` package's spec
    where it is installed, else pytest in the image's ``testbed`` environment."""
    try:
        from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS
    except ImportError:
        return CONDA_ACTIVATE + PYTEST, True
    spec = MAP_REPO_VERSION_TO_SPECS.get(repo, {}).get(str(version), {})
    cmd = spec.get("test_cmd")
    if isinstance(cmd, list):
        cmd = cmd[-1] if cmd else None
    if not cmd:
        return CONDA_ACTIVATE + PYTEST, True
    if "pytest" not in cmd:
        return CONDA_ACTIVATE + str(cmd), False
    return CONDA_ACTIVATE + PYTEST, True  # the verifier adds node ids and its own report options


def _r2e_tests(row: dict[str, Any]) -> list[str]:
    raw = row.get("expected_output_json")
    if not raw:
        return []
    try:
        expected = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (ValueError, TypeError):
        return []
    return sorted(k for k, v in expected.items() if str(v).upper() == "PASSED")


def row_to_task(dataset: str, row: dict[str, Any]) -> Task:
    """One corpus row as a Task (``environment = docker://IMAGE``)."""
    if dataset not in DATASETS:
        raise ValueError(f"dataset {dataset!r} is not one of {', '.join(DATASETS)}")
    data = dict(row)
    if dataset == "r2e-gym":
        repo = str(data.get("repo_name") or data.get("repo") or "")
        commit = str(data.get("commit_hash") or data.get("base_commit") or "")
        data.setdefault("instance_id", f"{repo}__{commit[:12]}" if repo and commit else "")
        data.setdefault("repo", repo)
        data.setdefault("base_commit", commit)
        if not data.get("FAIL_TO_PASS") and not data.get("PASS_TO_PASS"):
            data["FAIL_TO_PASS"] = _r2e_tests(data)
    image = image_name(dataset, data)
    known = set(Task.model_fields)
    fields = {k: v for k, v in data.items() if k in known}
    extra = {k: v for k, v in data.items() if k not in known}
    cmd, pytest_ok = swebench_test_cmd(str(data.get("repo", "")), data.get("version"))
    labels = dict(fields.get("labels") or {})
    labels["dataset"] = {"name": dataset, "pytest": pytest_ok,
                         "extra_fields": sorted(extra)[:20]}  # names only: the rows can be large
    fields.update(environment=f"docker://{image}", source=None, labels=labels)
    fields.setdefault("test_cmd", None)
    fields["test_cmd"] = fields["test_cmd"] or cmd
    return Task.model_validate(fields)


def load_dataset(path: str | Path, dataset: str) -> list[Task]:
    """Tasks from an export (JSONL / JSON / Parquet) of a corpus's rows; TaskLoadError names the
    file, the row and the problem."""
    path = Path(path)
    tasks, seen = [], set()
    for line, row in iter_task_rows(path):
        if not isinstance(row, dict):
            raise TaskLoadError(path, line, None, f"expected an object, got {type(row).__name__}")
        try:
            task = row_to_task(dataset, row)
        except ValueError as exc:
            raise TaskLoadError(path, line, None, str(exc).splitlines()[0]) from None
        if task.instance_id in seen:
            raise TaskLoadError(path, line, "instance_id", f"duplicate instance_id {task.instance_id!r}")
        seen.add(task.instance_id)
        tasks.append(task)
    return tasks
