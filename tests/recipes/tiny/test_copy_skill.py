"""Copy-skill probes on real models: the untrained tiny model and the shipped warm start."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from swetrain.recipes.tiny.copy_skill import EDIT_KEYS, _call_arguments, edit_probe, induction_accuracy
from swetrain.recipes.tiny.warmstart import shipped_warm_start


@pytest.fixture(scope="module")
def tiny_path():
    from swetrain.policy.tiny import ensure_tiny

    return ensure_tiny()


def _load(path):
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval(), AutoTokenizer.from_pretrained(path)


def test_induction_accuracy_rejects_bad_arguments(tiny_path):
    model, _ = _load(tiny_path)
    with pytest.raises(ValueError, match="span >= 2"):
        induction_accuracy(model, span=1)
    with pytest.raises(ValueError, match="min_gap=20, max_gap=10"):
        induction_accuracy(model, min_gap=20, max_gap=10)


def test_untrained_model_neither_copies_nor_calls_tools(tiny_path):
    model, tok = _load(tiny_path)
    assert induction_accuracy(model, n=4) < 0.05
    probe = edit_probe(model, tok, n=3, max_new_tokens=24)
    assert set(probe) == set(EDIT_KEYS) and probe["valid"] == 0.0


def test_shipped_warm_start_writes_valid_edit_calls():
    path = shipped_warm_start()
    if path is None:
        pytest.skip("no shipped warm start in this checkout")
    model, tok = _load(path)
    probe = edit_probe(model, tok, n=8)
    assert probe["valid"] >= 0.5  # it learned the str_replace call format from the drills
    assert all(0.0 <= v <= probe["valid"] for k, v in probe.items() if k != "valid")


def test_call_arguments_parses_only_well_formed_calls():
    good = '<tool_call>\n{"name": "file_editor", "arguments": {"path": "a.py"}}\n</tool_call>'
    assert _call_arguments(good) == {"path": "a.py"}
    assert _call_arguments("<tool_call>\n{not json}\n</tool_call>") is None
    assert _call_arguments("no call") is None
    assert _call_arguments('<tool_call>\n["x"]\n</tool_call>') is None
