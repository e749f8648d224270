"""Low-rank adapters of a fine-tune: extraction by SVD, merging, files, bad inputs (real tiny model)."""

from __future__ import annotations

import pytest
import torch

from swetrain.policy.adapter import AdapterError, extract_adapter, load_adapter, merge_adapter, save_adapter


def _model(tiny_path):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32)


def _tune(model, rank: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """Add a known rank-``rank`` change to every matrix and a change to every vector, in place."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2:
                p += 0.01 * torch.randn(p.shape[0], rank, generator=g) @ torch.randn(rank, p.shape[1], generator=g)
            else:
                p += 0.01 * torch.randn(p.shape, generator=g)
    return dict(model.named_parameters())


def test_an_adapter_of_the_true_rank_reproduces_the_fine_tune(tiny_path):
    base, tuned = _model(tiny_path), _model(tiny_path)
    w1 = _tune(tuned, rank=2)
    adapter, errors = extract_adapter(dict(base.named_parameters()), w1, rank=2)
    assert errors and max(errors.values()) < 1e-4
    assert any(k.endswith(".delta") for k in adapter) and any(k.endswith(".lora_A") for k in adapter)
    ids = torch.tensor([[1, 5, 9, 14, 3, 7]])
    before = base(ids).logits
    assert merge_adapter(base, adapter) == len({k.rsplit(".", 1)[0] for k in adapter})
    after, want = base(ids).logits, tuned(ids).logits
    assert not torch.allclose(before, want, atol=1e-3)
    assert torch.allclose(after, want, atol=1e-4)


def test_a_lower_rank_loses_some_of_the_change_and_says_how_much(tiny_path):
    base, tuned = _model(tiny_path), _model(tiny_path)
    w1 = _tune(tuned, rank=4)
    _, errors = extract_adapter(dict(base.named_parameters()), w1, rank=1)
    assert all(0.05 < e < 1.0 for e in errors.values())


def test_unchanged_tensors_are_left_out_and_files_round_trip(tiny_path, tmp_path):
    base, tuned = _model(tiny_path), _model(tiny_path)
    name, p = next((n, p) for n, p in tuned.named_parameters() if p.dim() == 2)
    with torch.no_grad():
        p[0, 0] += 1.0  # one entry: rank 1
    adapter, errors = extract_adapter(dict(base.named_parameters()), dict(tuned.named_parameters()), rank=1, dtype=torch.bfloat16)
    assert set(adapter) == {name + ".lora_A", name + ".lora_B"} and errors[name] < 1e-6
    save_adapter(tmp_path / "a", adapter, {"rank": 1})
    tensors, meta = load_adapter(tmp_path / "a")
    assert meta == {"rank": 1} and tensors.keys() == adapter.keys() and tensors[name + ".lora_A"].dtype == torch.bfloat16


def test_bad_adapters_are_refused_naming_the_entry(tiny_path, tmp_path):
    model = _model(tiny_path)
    name, p = next((n, p) for n, p in model.named_parameters() if p.dim() == 2)
    with pytest.raises(AdapterError, match="names no parameter"):
        merge_adapter(model, {"nope.weight.delta": torch.zeros(2)})
    with pytest.raises(AdapterError, match="does not fit"):
        merge_adapter(model, {name + ".delta": torch.zeros(p.shape[0] + 1, p.shape[1])})
    with pytest.raises(AdapterError, match="needs both"):
        merge_adapter(model, {name + ".lora_A": torch.zeros(1, p.shape[1])})
    with pytest.raises(AdapterError, match="without"):
        merge_adapter(model, {name: torch.zeros(p.shape)})
    with pytest.raises(AdapterError, match="rank 0"):
        extract_adapter({}, {}, rank=0)
    with pytest.raises(AdapterError, match="differ in keys"):
        extract_adapter({"a": torch.zeros(1)}, {"b": torch.zeros(1)}, rank=1)
    with pytest.raises(AdapterError, match="no adapter file"):
        load_adapter(tmp_path)
    (tmp_path / "adapter.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(AdapterError, match="not a readable adapter"):
        load_adapter(tmp_path)
