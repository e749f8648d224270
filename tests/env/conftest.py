"""Fixtures for env tests: a real demo task in tmp_path, swetrain's cache in tmp_path too."""

from __future__ import annotations

import pytest

from swetrain.env.demo import build_demo_task
from swetrain.env.workspace import Limits, Workspace


@pytest.fixture(autouse=True)
def _private_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SWETRAIN_HOME", str(tmp_path / "home"))


@pytest.fixture
def task(tmp_path):
    return build_demo_task(tmp_path / "task")


@pytest.fixture
def ws(task, tmp_path):
    with Workspace.create(task, root=tmp_path / "ws", limits=Limits(timeout_s=30)) as w:
        yield w
