"""The warm-start recipe end to end on a tiny budget: demos + drills -> SFT -> saved -> shipped."""

from __future__ import annotations

import json

import pytest
import torch

pytestmark = pytest.mark.slow


def test_build_with_drills_then_ship_float16(tmp_path):
    from transformers import AutoModelForCausalLM

    from swetrain.recipes.tiny.warmstart import WarmStartConfig, _build, ship_warm_start, shipped_warm_start

    cfg = WarmStartConfig(max_demos=2, epochs=1, drills=6, lr=1e-3, batch_tokens=4096, stage2_drills=3, stage2_demos=1,
                          copy_steps=2, copy_easy_steps=3, copy_mix=5)
    out = tmp_path / "ws"
    _build("tiny", cfg, out, None)
    info = json.loads((out / "warmstart.json").read_text())
    assert info["demonstrations"] == 2 and info["drills"] == 6
    copy = info["copy_pretrain"]
    assert copy["easy_steps"] == 3 and copy["steps"] == 5 and 0.0 <= copy["induction_accuracy"] <= 1.0
    assert "samples" not in copy
    # the copy pretraining ran on 2 layers and the saved model has the preset's depth again
    assert json.loads((out / "config.json").read_text())["num_hidden_layers"] == 4
    assert info["stage2_samples"] == 4  # 3 drills + 1 demonstration in the second pass
    assert info["nll_after"] < info["nll_before"]

    shipped = ship_warm_start(out, tmp_path / "shipped")
    assert shipped_warm_start(shipped) == shipped
    a = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)
    b = AutoModelForCausalLM.from_pretrained(shipped, dtype=torch.float32)
    assert next(b.parameters()).dtype == torch.float32
    ids = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.no_grad():
        assert torch.allclose(a(ids).logits, b(ids).logits, atol=5e-2)
    assert json.loads((shipped / "warmstart.json").read_text())["shipped_dtype"] == "float16"


def test_second_stage_is_part_of_the_cache_key():
    from swetrain.recipes.tiny.warmstart import PRESET_CONFIGS, WarmStartConfig, warm_start_path

    one = WarmStartConfig(max_demos=8, epochs=1)
    two = WarmStartConfig(max_demos=8, epochs=1, stage2_drills=250)
    assert warm_start_path("smollm2", one) != warm_start_path("smollm2", two)
    assert PRESET_CONFIGS["smollm2"].stage2_drills == 250


def test_copy_pretraining_is_part_of_the_cache_key():
    from swetrain.recipes.tiny.warmstart import PRESET_CONFIGS, WarmStartConfig, warm_start_path

    paths = {warm_start_path("tiny", WarmStartConfig(**kw)) for kw in
             ({}, {"copy_steps": 1500}, {"copy_steps": 1500, "copy_mix": 10}, {"copy_steps": 1500, "copy_easy_steps": 9},
              {"copy_steps": 1500, "copy_lr": 1e-3})}
    assert len(paths) == 5
    assert PRESET_CONFIGS["tiny"].copy_steps > 0


def test_recipe_builds_deterministically_from_a_seed(tmp_path):
    """Two builds with the same config and seed give bit-identical weights; drills follow the seed."""
    from safetensors.torch import load_file

    from swetrain.recipes.tiny.drills import make_drills
    from swetrain.recipes.tiny.warmstart import WarmStartConfig, _build

    cfg = WarmStartConfig(max_demos=2, epochs=1, drills=4, lr=1e-3, batch_tokens=4096, copy_steps=2, copy_easy_steps=3,
                          copy_mix=3, seed=5)
    for name in ("a", "b"):
        _build("tiny", cfg, tmp_path / name, None)
    a, b = (load_file(tmp_path / n / "model.safetensors") for n in ("a", "b"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert list(make_drills(5, seed=5)) == list(make_drills(5, seed=5)) != list(make_drills(5, seed=6))


def test_small_preset_starts_from_the_wider_tiny_model():
    """The wider-model lever: the ``small`` warm start builds on ``tiny:small`` (6 x 256), under its own
    cache key, and ``small-sft`` names it."""
    from swetrain.policy.spec import parse_policy_spec
    from swetrain.policy.tiny import PRESETS
    from swetrain.recipes.tiny.warmstart import BASE_SPECS, PRESET_CONFIGS, warm_start_path

    spec = parse_policy_spec(BASE_SPECS["small"])
    assert spec.kind == "tiny" and spec.name == "small"
    assert PRESETS["small"].hidden_size > PRESETS["tiny"].hidden_size
    assert PRESETS["small"].num_hidden_layers > PRESETS["tiny"].num_hidden_layers
    assert warm_start_path("small").name.startswith("small-sft-") and warm_start_path("small") != warm_start_path("tiny")
    assert PRESET_CONFIGS["small"].copy_steps > 0 and PRESET_CONFIGS["small"].copy_lr == 1e-3
    assert warm_start_path("tiny").name == warm_start_path("tiny", PRESET_CONFIGS["tiny"]).name  # tiny's key unchanged
    assert "lr" not in warm_start_path("tiny").name.split("-c")[-1]
    assert parse_policy_spec("small-sft").kind == "named"


def test_crash_tier_preset_adds_every_easy_demo_under_its_own_key(tmp_path):
    """``smollm2-easy``: SmolLM2 plus the crash-tier demonstrations, its own cache key and spec name;
    ``easy_demos`` puts every crash-tier row before the seeded standard subset (tiny model, tiny budget)."""
    from swetrain.policy.spec import parse_policy_spec
    from swetrain.recipes.tiny.warmstart import (BASE_SPECS, DEMOS_EASY_FILE, PRESET_CONFIGS, WarmStartConfig, _build,
                                                 load_demos, warm_start_path)

    cfg = PRESET_CONFIGS["smollm2-easy"]
    assert cfg.easy_demos and BASE_SPECS["smollm2-easy"] == "smollm2"
    assert warm_start_path("smollm2-easy") != warm_start_path("smollm2")
    assert warm_start_path("smollm2-easy").name.startswith("smollm2-easy-sft-")
    assert parse_policy_spec("smollm2-easy-sft").kind == "named"
    assert warm_start_path("tiny", WarmStartConfig()) != warm_start_path("tiny", WarmStartConfig(easy_demos=True))
    n_easy = len(load_demos(DEMOS_EASY_FILE))
    _build("tiny", WarmStartConfig(max_demos=1, epochs=1, lr=1e-3, batch_tokens=4096, easy_demos=True), tmp_path / "ws", None)
    info = json.loads((tmp_path / "ws" / "warmstart.json").read_text())
    assert info["demonstrations"] == n_easy + 1
    assert (tmp_path / "ws" / "demos_easy.jsonl").read_bytes() == DEMOS_EASY_FILE.read_bytes()


def test_warmstart_cli_names_the_bases_on_a_bad_one():
    from typer.testing import CliRunner

    from swetrain.cli import app

    res = CliRunner().invoke(app, ["warmstart", "--base", "smollm3"])
    assert res.exit_code == 2
    assert "'smollm3' is not a warm-start base" in res.output and "smollm2-easy" in res.output
