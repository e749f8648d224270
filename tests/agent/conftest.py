"""Fixtures of the agent tests: the tiny policy's real tokenizer, a tokenizer without a chat
template (exercises the built-in template), and small real tasks (git repo + pytest tests)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_tokenizer():
    from transformers import AutoTokenizer

    from swetrain.policy.tiny import ensure_tiny

    return AutoTokenizer.from_pretrained(str(ensure_tiny()))

@pytest.fixture(scope="session")
def plain_tokenizer(tiny_tokenizer):
    """The same vocabulary without a chat template."""
    import copy

    tok = copy.deepcopy(tiny_tokenizer)
    tok.chat_template = None
    return tok
