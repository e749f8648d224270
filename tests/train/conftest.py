"""Fixtures of the train tests: the real tiny policy and trajectories in the real agent format."""

from __future__ import annotations

import pytest

from swetrain.policy.threads import configure_torch_threads

configure_torch_threads()

from train_helpers import TOOLS  # noqa: E402,F401


@pytest.fixture(scope="session")
def tiny_path():
    from swetrain.policy.tiny import ensure_tiny

    return ensure_tiny()


@pytest.fixture(scope="session")
def tokenizer(tiny_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_path)
