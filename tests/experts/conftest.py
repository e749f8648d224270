"""Fixtures of the experts tests: the real tiny policy; the train tests' trajectory helpers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from swetrain.policy.threads import configure_torch_threads

configure_torch_threads()
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "train"))


@pytest.fixture(scope="session")
def tiny_path():
    from swetrain.policy.tiny import ensure_tiny

    return ensure_tiny()


@pytest.fixture(scope="session")
def tokenizer(tiny_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_path)
