"""Fixtures of the tiny recipe's tests: the real tiny policy and its tokenizer (as in tests/train)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from swetrain.policy.threads import configure_torch_threads

configure_torch_threads()

# the shared test library of the train tests (train_helpers.LIB_OK), also the drills' source text
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "train"))


@pytest.fixture(scope="session")
def tiny_path():
    from swetrain.policy.tiny import ensure_tiny

    return ensure_tiny()


@pytest.fixture(scope="session")
def tokenizer(tiny_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_path)
