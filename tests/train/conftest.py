"""Fixtures of the train tests: torch threads; the real agent format (train_helpers). tiny_path/tokenizer: root conftest."""

from __future__ import annotations

from swetrain.policy.threads import configure_torch_threads

configure_torch_threads()

from train_helpers import TOOLS  # noqa: E402,F401
