"""Padding, masks and micro-batch planning of swetrain.train.batch."""

from __future__ import annotations

import pytest
import torch

from swetrain.train.batch import TrainSample, collate, plan_micro_batches, token_logprobs


def _sample(n: int, trainable: list[int], adv: float | list[float] = 1.0) -> TrainSample:
    mask = [1 if i in trainable else 0 for i in range(n)]
    return TrainSample(
        token_ids=list(range(1, n + 1)),
        loss_mask=mask,
        segment_ids=[0] * n,
        behavior_logprobs=[-0.5 if m else 0.0 for m in mask],
        invalid=[0] * n,
        advantage=adv,
    )


def test_collate_masks_padding_and_context() -> None:
    batch = collate([_sample(5, [2, 3], 2.0), _sample(3, [1], -1.0)], pad_id=0)
    assert batch.shape == (2, 5)
    assert batch.attention_mask.tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]
    assert batch.loss_mask.tolist() == [[0, 0, 1, 1, 0], [0, 1, 0, 0, 0]]
    # advantages and behaviour log-probs only where the loss mask is 1; padding has zero weight
    assert batch.advantages.tolist() == [[0, 0, 2, 2, 0], [0, -1, 0, 0, 0]]
    assert batch.segment_ids.tolist() == [[-1, -1, 0, 0, -1], [-1, 0, -1, -1, -1]]
    assert batch.input_ids[1, 3:].tolist() == [0, 0]
    sub = batch.select([1])
    assert sub.shape == (1, 3)


def test_sample_validation() -> None:
    with pytest.raises(ValueError, match="loss_mask: length 2"):
        TrainSample([1, 2, 3], [0, 1], [0, 0, 0], [0, 0, 0], [0, 0, 0])
    with pytest.raises(ValueError, match="first token"):
        TrainSample([1, 2], [1, 1], [0, 0], [0, 0], [0, 0])
    with pytest.raises(ValueError, match="advantage"):
        TrainSample([1, 2], [0, 1], [0, 0], [0, 0], [0, 0], advantage=[1.0])


def test_micro_batches_respect_budget_and_cover_all() -> None:
    lengths = [10, 3, 7, 2, 9, 30]
    plan = plan_micro_batches(lengths, 20)
    assert sorted(i for group in plan for i in group) == list(range(len(lengths)))
    for group in plan:
        assert len(group) == 1 or len(group) * max(lengths[i] for i in group) <= 20
    assert [5] in plan  # over-budget sample alone


def test_token_logprobs_alignment() -> None:
    class Uniformish(torch.nn.Module):
        def forward(self, input_ids, attention_mask):
            v = 7
            logits = torch.zeros(*input_ids.shape, v)
            logits[..., 3] = 5.0  # every position predicts token 3 strongly

            class Out:
                pass

            out = Out()
            out.logits = logits
            return out

    ids = torch.tensor([[1, 3, 2]])
    logp = token_logprobs(Uniformish(), ids, torch.ones_like(ids))
    assert logp[0, 0] == 0
    assert logp[0, 1] > logp[0, 2]  # token 3 at t=1 is likely, token 2 at t=2 is not


def test_masked_logprobs_match_full(tiny_path):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32).eval()
    ids = torch.randint(0, 500, (2, 40))
    att = torch.ones_like(ids)
    att[1, 30:] = 0
    mask = torch.zeros(2, 40)
    mask[0, 10:20] = 1
    mask[1, 5:25] = 1
    with torch.no_grad():
        full = token_logprobs(model, ids, att)
        part = token_logprobs(model, ids, att, mask)
    assert torch.allclose(full * mask, part, atol=1e-5)
    assert (part[mask == 0] == 0).all()
