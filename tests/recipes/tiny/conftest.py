"""Fixtures of the tiny recipe's tests: torch threads; the train tests' library on sys.path (tiny_path/tokenizer: root conftest)."""

from __future__ import annotations

import sys
from pathlib import Path

from swetrain.policy.threads import configure_torch_threads

configure_torch_threads()

# the shared test library of the train tests (train_helpers.LIB_OK), also the drills' source text
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "train"))
