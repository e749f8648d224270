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
