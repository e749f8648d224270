"""``train.trainable_layers``: only the top decoder blocks (and the final norm) learn."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM

from swetrain.train.freeze import decoder_layers, train_top_layers


def test_top_layers_alone_get_gradients_and_move(tiny_path):
    model = AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32)
    layers = decoder_layers(model)
    total = sum(p.numel() for p in model.parameters())
    trainable = train_top_layers(model, 1)
    assert 0 < trainable < total
    top = {id(p) for p in layers[-1].parameters()} | {id(p) for p in model.get_decoder().norm.parameters()}
    assert {id(p) for p in model.parameters() if p.requires_grad} == top
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    ids = torch.randint(3, 100, (2, 24))
    model(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    moved = {n for n, p in model.named_parameters() if not torch.equal(p.detach(), before[n])}
    assert moved and moved == {n for n, p in model.named_parameters() if id(p) in top}
    assert train_top_layers(model, None) == trainable  # None leaves the model as it is


def test_bad_layer_count_is_named(tiny_path):
    model = AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32)
    n = len(decoder_layers(model))
    with pytest.raises(ValueError, match=rf"train.trainable_layers={n + 1}: the model has {n} decoder blocks"):
        train_top_layers(model, n + 1)


def test_config_key_is_checked():
    from swetrain.train.config import ConfigError, load_config

    assert load_config("fcswe", overrides=["train.trainable_layers=4"]).train.trainable_layers == 4
    assert load_config("fcswe").train.trainable_layers is None
    with pytest.raises(ConfigError, match=r"train\.trainable_layers"):
        load_config("fcswe", overrides=["train.trainable_layers=0"])
