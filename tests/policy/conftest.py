"""Build the tiny policy once per test session (a few seconds) and share it."""

from __future__ import annotations

import pytest

from swetrain.policy.threads import configure_torch_threads


@pytest.fixture(scope="session")
def tiny_path(tmp_path_factory):
    from swetrain.policy.tiny import build_tiny

    configure_torch_threads()
    return build_tiny(tmp_path_factory.mktemp("policies") / "tiny", preset="tiny", seed=0)


@pytest.fixture(scope="session")
def hf_policy(tiny_path):
    from swetrain.policy.hf import HFPolicy

    return HFPolicy(tiny_path, device="cpu", dtype="float32")


@pytest.fixture()
def fresh_policy(tiny_path):
    """A policy of its own, for tests that change weights."""
    from swetrain.policy.hf import HFPolicy

    return HFPolicy(tiny_path, device="cpu", dtype="float32")


def _chat_prompt(tokenizer, text: str) -> list[int]:
    """Token ids of a one-message chat with the generation prompt appended."""
    out = tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True, tokenize=True)
    return list(out["input_ids"] if hasattr(out, "keys") else out)


@pytest.fixture(scope="session")
def chat_prompt():
    return _chat_prompt
