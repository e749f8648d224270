"""The backend factory (env/backend.py): every name of ``BACKENDS`` is a complete ``WorkspaceBackend``,
and a new backend is one class plus one map line that open/preflight/isolation then go through."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest

from swetrain.env import backend
from swetrain.env.interface import WorkspaceBackend
from swetrain.env.workspace import Workspace

CALLS: list[tuple[str, Any]] = []


class RecordingWorkspace(Workspace):
    """A "new backend": the local one, with the class-level entry points recording their calls."""

    @classmethod
    def open(cls, task: Any, **options: Any) -> Workspace:
        CALLS.append(("open", (task, options)))
        return super().open(task, **options)

    @classmethod
    def preflight(cls, tasks: Any) -> None:
        CALLS.append(("preflight", tasks))

    @classmethod
    def isolation_record(cls) -> dict[str, Any]:
        return {"isolated": True, "backend": "recording", "note": "isolated: recording backend"}


@pytest.fixture
def recording(monkeypatch):
    CALLS.clear()
    monkeypatch.setitem(backend.BACKENDS, "recording", f"{__name__}:RecordingWorkspace")
    return CALLS


def test_every_backend_implements_the_whole_interface():
    assert set(backend.BACKENDS) == {"local", "docker"}
    for name in backend.BACKENDS:
        cls = backend.backend_class(name)
        assert issubclass(cls, WorkspaceBackend) and not inspect.isabstract(cls), name
    assert backend.backend_class("local") is Workspace


def test_a_new_backend_is_one_map_line(recording, task, tmp_path):
    with backend.open_workspace(task, sandbox="recording", root=tmp_path / "ws", one_shot=True) as ws:
        assert isinstance(ws, RecordingWorkspace) and ws.path.is_relative_to(tmp_path / "ws")
        assert ws.run("cat calc/__init__.py").returncode == 0
    assert recording[0] == ("open", (task, {"limits": None, "root": tmp_path / "ws", "isolated": None, "one_shot": True}))
    backend.preflight("recording", iter([task]))
    assert recording[-1] == ("preflight", [task])
    record = backend.announce_isolation(tmp_path / "run", sandbox="recording")
    assert record["backend"] == "recording"
    assert json.loads((tmp_path / "run" / "isolation.json").read_text()) == record


def test_unknown_sandbox_names_the_choices():
    with pytest.raises(ValueError, match="'nope' is not one of local, docker"):
        backend.open_workspace(object(), sandbox="nope")
    with pytest.raises(ValueError, match="is not one of"):
        backend.preflight("nope", [])


class NoHostTrees(Workspace):
    """The local backend seen as a remote one: no folders on this host (the Docker path of the hardening)."""

    def host_trees(self) -> None:
        return None


@pytest.mark.parametrize("cls", [Workspace, NoHostTrees])
def test_hardening_reads_the_workspace_through_the_interface(cls, task, tmp_path):
    """``changed_paths`` and ``read_report`` use ``host_trees()`` when the backend has them and the
    interface's commands and file reads when it has not: both see the same change and report."""
    from swetrain.env.harden import ReportError, changed_paths, read_report

    with cls.open(task, root=tmp_path / "ws", one_shot=True) as ws:
        assert (ws.host_trees() is not None) == (cls is Workspace)
        ws.write_file("calc/new_module.py", b"VALUE = 1\n")
        ws.write_file("report.xml", b"<testsuite/>")
        assert {"calc/new_module.py", "report.xml"} <= changed_paths(ws)
        assert read_report(ws, "report.xml") == b"<testsuite/>"
        with pytest.raises(ReportError, match="larger than 4 bytes"):
            read_report(ws, "report.xml", max_bytes=4)
        with pytest.raises(ReportError, match="no report"):
            read_report(ws, "missing.xml")
