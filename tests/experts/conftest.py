"""Fixtures of the experts tests: torch threads; the train tests' trajectory helpers on sys.path (tiny_path/tokenizer: root conftest)."""

from __future__ import annotations

import sys
from pathlib import Path

from swetrain.policy.threads import configure_torch_threads

configure_torch_threads()
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "train"))
