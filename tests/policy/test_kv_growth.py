"""GrowingLayer: decode steps append into spare room, and the model computes exactly what it computes
with transformers' DynamicCache, through row selection and trimming of leading columns."""

from __future__ import annotations

import copy

import pytest

from swetrain.policy.hf import kv_cache_of, left_pad
from swetrain.policy.kv_growth import grow_in_place, growing_layer_class

torch = pytest.importorskip("torch")


def _decode(policy, cache, mask, last, positions, steps, *, select_at=None, trim_at=None):
    """Greedy decode ``steps`` tokens; at ``select_at`` keep rows 0 and 2, at ``trim_at`` drop one
    leading all-padding column (as ContinuousBatchingPolicy does). Returns logits per step and
    the key buffers' addresses per step (0 for a plain layer)."""
    logits, addresses = [], []
    rows = torch.arange(last.shape[0])
    for step in range(steps):
        if step == select_at:
            keep = torch.tensor([0, 2])
            cache.batch_select_indices(keep)
            mask, last, positions, rows = mask[keep], last[keep], positions[keep], rows[keep]
        if step == trim_at:
            mask = torch.cat([mask.new_zeros((mask.shape[0], 1)), mask], dim=1)  # a padding column ...
            for layer in cache.layers:  # ... prepended, then cut as the wrapper cuts unused columns
                pad = layer.keys.new_zeros(layer.keys.shape[:-2] + (1, layer.keys.shape[-1]))
                layer.keys = torch.cat([pad, layer.keys], dim=-2)[..., 1:, :]
                layer.values = torch.cat([pad, layer.values], dim=-2)[..., 1:, :]
            mask = mask[:, 1:]
        mask = torch.cat([mask, mask.new_ones((mask.shape[0], 1))], dim=1)
        out = policy.model(input_ids=last, attention_mask=mask, position_ids=positions, use_cache=True,
                           **{policy.cache_arg: cache})
        cache = kv_cache_of(out)
        step_logits = out.logits[:, -1, :].float()
        logits.append((rows.clone(), step_logits))
        last = step_logits.argmax(dim=-1, keepdim=True)
        positions = positions + 1
        addresses.append(getattr(cache.layers[0], "_key_buffer", None))
    return logits, [0 if b is None else b.data_ptr() for b in addresses]


def test_growing_layers_compute_what_dynamic_layers_compute(hf_policy, tokenizer):
    prompts = [tokenizer(t)["input_ids"] for t in ["def add(a, b):", "x", "class Stack:\n    def push(self, item):"]]
    ids, mask, positions = left_pad(prompts, hf_policy.pad_id, "cpu")
    with torch.inference_mode():
        out = hf_policy.forward_prompt(ids, mask, positions)
        plain = kv_cache_of(out)
        grown = grow_in_place(copy.deepcopy(plain))
        assert {type(layer).__name__ for layer in grown.layers} == {"GrowingLayer"}
        last = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
        start = positions[:, -1:] + 1
        steps = 160  # more than the first spare room (128 columns), so the buffer is reallocated at least once
        expected, plain_addresses = _decode(hf_policy, plain, mask, last, start, steps, select_at=60, trim_at=90)
        got, addresses = _decode(hf_policy, grown, mask, last, start, steps, select_at=60, trim_at=90)
    assert plain_addresses == [0] * steps
    for (rows_a, a), (rows_b, b) in zip(expected, got):
        assert torch.equal(rows_a, rows_b)
        assert torch.allclose(a, b, atol=1e-5, rtol=0)
    # in place between the events that replace the states: the buffer changes only on a reallocation
    changes = sum(1 for x, y in zip(addresses, addresses[1:]) if x != y)
    assert 2 <= changes <= 5  # the row selection, the trim, and room running out once or twice
    assert len(set(addresses[:59])) == 1


def test_growing_layer_reallocates_when_room_runs_out():
    layer = growing_layer_class()()
    k = torch.randn(1, 2, 3, 4)
    layer.update(k, k + 1)
    first = layer._key_buffer
    assert first.shape[-2] == 3 + 128
    for i in range(128):
        step = torch.full((1, 2, 1, 4), float(i))
        keys, values = layer.update(step, step + 1)
    assert layer._key_buffer.data_ptr() == first.data_ptr()  # 128 more columns fit
    keys, values = layer.update(torch.ones(1, 2, 1, 4), torch.ones(1, 2, 1, 4))
    assert layer._key_buffer.data_ptr() != first.data_ptr()
    assert keys.shape == (1, 2, 3 + 129, 4) and layer.get_seq_length() == 3 + 129
    assert torch.equal(keys[..., :3, :], k) and torch.equal(values[..., :3, :], k + 1)
    assert torch.equal(keys[0, :, 3 + 127, 0], torch.tensor([127.0, 127.0]))


def test_grow_in_place_leaves_other_caches_alone():
    class NoLayers:
        pass

    thing = NoLayers()
    assert grow_in_place(thing) is thing


def test_stacked_rows_are_right_aligned_after_zeros_and_append_in_place():
    growing = growing_layer_class()
    a = torch.randn(2, 3, 5, 4)  # 2 rows of 5 columns
    b = torch.randn(1, 3, 7, 4)  # 1 row of 7 columns
    layer = growing.stacked([(a, a + 1), (b, b + 1)], width=7)
    assert layer.keys.shape == (3, 3, 7, 4) and layer.get_seq_length() == 7
    assert torch.equal(layer.keys[:2, :, :2], torch.zeros(2, 3, 2, 4))
    assert torch.equal(layer.keys[:2, :, 2:], a) and torch.equal(layer.values[:2, :, 2:], a + 1)
    assert torch.equal(layer.keys[2:], b) and torch.equal(layer.values[2:], b + 1)
    buffer = layer._key_buffer.data_ptr()
    keys, _ = layer.update(torch.ones(3, 3, 1, 4), torch.ones(3, 3, 1, 4))
    assert layer._key_buffer.data_ptr() == buffer and keys.shape[-2] == 8
    assert torch.equal(keys[:, :, 7], torch.ones(3, 3, 4))


def test_held_states_are_never_written(hf_policy):
    keys, values = torch.randn(1, 3, 4, 8), torch.randn(1, 3, 4, 8)
    before = keys.clone()
    layer = growing_layer_class().holding(keys, values)
    layer.update(torch.zeros(1, 3, 2, 8), torch.zeros(1, 3, 2, 8))
    assert torch.equal(keys, before) and layer.keys.shape[-2] == 6
    with pytest.raises(ValueError, match="plain full-attention layers"):
        from swetrain.policy.kv_growth import fill_cache

        fill_cache(hf_policy.empty_cache(), [layer])


def test_keep_selects_rows_and_trims_columns_in_one_buffer_with_room():
    growing = growing_layer_class()
    k = torch.randn(4, 3, 10, 2)
    layer = growing.holding(k, k * 2)
    layer.keep(torch.tensor([3, 1]), first=4)
    assert torch.equal(layer.keys, k[[3, 1], :, 4:]) and torch.equal(layer.values, 2 * k[[3, 1], :, 4:])
    buffer = layer._key_buffer.data_ptr()
    keys, _ = layer.update(torch.ones(2, 3, 1, 2), torch.ones(2, 3, 1, 2))
    assert layer._key_buffer.data_ptr() == buffer and keys.shape == (2, 3, 7, 2)
