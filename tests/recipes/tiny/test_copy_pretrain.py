"""Copy pretraining: exact layer growth, the copy batches, and the easy-phase switch."""

from __future__ import annotations

import random

import pytest
import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from swetrain.recipes.tiny.copy_pretrain import (
    CopyPretrainConfig,
    copy_batch,
    copy_pretrain,
    copy_pretrained,
    copy_samples,
    grow_layers,
    truncate_layers,
)


def _model(layers: int = 4) -> Qwen2ForCausalLM:
    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    return Qwen2ForCausalLM(cfg).eval()


def test_grown_layers_compute_the_same_function_and_then_train():
    model = truncate_layers(_model(4), 2)
    assert model.config.num_hidden_layers == 2 and len(model.model.layers) == 2
    ids = torch.randint(0, 128, (2, 20))
    with torch.no_grad():
        before = model(input_ids=ids).logits
    grow_layers(model, 4)
    assert model.config.num_hidden_layers == 4 and len(model.model.layers) == 4
    assert [layer.self_attn.layer_idx for layer in model.model.layers] == [0, 1, 2, 3]
    with torch.no_grad():
        assert torch.allclose(model(input_ids=ids).logits, before, atol=1e-5)
    # generation with a KV cache works at the grown depth
    out = model.generate(ids[:1, :5], max_new_tokens=3, do_sample=False)
    assert out.shape == (1, 8)
    # the zeroed residual outputs still receive gradient (the new layers are trainable)
    model.train()
    model(input_ids=ids, labels=ids).loss.backward()
    assert model.model.layers[3].self_attn.o_proj.weight.grad.abs().sum() > 0


def test_bad_depths_are_refused():
    with pytest.raises(ValueError, match="truncate_layers"):
        truncate_layers(_model(2), 3)
    with pytest.raises(ValueError, match="grow_layers"):
        grow_layers(_model(4), 2)
    with pytest.raises(ValueError, match="span"):
        CopyPretrainConfig(span=2)


def test_copy_batch_repeats_the_span_and_masks_the_repetition():
    cfg = CopyPretrainConfig(batch=3, span=8, max_gap=4)
    code = [list(range(200, 260))]
    for easy in (True, False):
        x, mask = copy_batch(easy, cfg, 128 if easy else 300, code, random.Random(1))
        assert x.shape == mask.shape and x.shape[0] == 3
        first = int(mask[0].nonzero()[0]) - 1  # the repetition starts one before the first masked token
        n = x.shape[1] - first
        assert torch.equal(x[:, :n], x[:, first:])
        assert int(mask[0].sum()) == n - 1
        if easy:
            assert int(x.max()) < 10 + cfg.easy_vocab


def test_copy_samples_mask_the_repeated_tokens():
    cfg = CopyPretrainConfig(span=8, max_gap=3)
    (s,) = copy_samples([list(range(100))], 1, cfg)
    k = sum(s.loss_mask) + 1
    assert s.token_ids[-k:] == s.token_ids[:k] and s.loss_mask[-k] == 0
    with pytest.raises(ValueError, match="longer than"):
        copy_samples([[1, 2, 3]], 1, cfg)


def test_easy_phase_ends_at_the_threshold_and_training_lowers_the_copy_loss():
    model = _model(4)
    cfg = CopyPretrainConfig(easy_steps=5, easy_until=0.0, steps=1, batch=4, span=8, easy_vocab=50)
    stats = copy_pretrain(model, cfg)
    assert stats["easy_steps"] == 0 and stats["steps"] == 1  # threshold 0: no easy step at all

    cfg = CopyPretrainConfig(easy_steps=60, easy_until=1.0, steps=0 + 1, batch=16, span=8, easy_vocab=20, lr=3e-3, warmup_steps=5)
    x, mask = copy_batch(True, cfg, 128, (), random.Random(7))
    from swetrain.train.batch import token_logprobs

    def held_out_loss() -> float:
        with torch.no_grad():
            return float(-(token_logprobs(model, x, torch.ones_like(x), mask) * mask).sum() / mask.sum())

    before = held_out_loss()
    model, stats = copy_pretrained(model, cfg)
    assert stats["easy_steps"] == 60 and model.config.num_hidden_layers == 4
    assert held_out_loss() < before
