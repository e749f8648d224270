"""Trajectories -> padded training tensors, micro-batches by token budget.

A :class:`TrainSample` is one trajectory as the trainer sees it: its token ids exactly as generated
and observed, a loss mask that is 1 only on tokens the policy generated *in this trajectory*
(prompt, tool observations, copied failure context and padding have zero weight), the assistant
turn (segment) id of every token, the rollout engine's behaviour log-probs, the tokens of flagged
(invalid) assistant messages, and its advantage (a scalar broadcast to its trainable tokens, or
one value per token).

:func:`collate` pads a list of samples into a :class:`Batch` of ``[B, T]`` tensors (right padding);
:func:`plan_micro_batches` splits sample indices into micro-batches whose padded size
``n_rows x max_len`` stays under a token budget; :func:`token_logprobs` scores a batch with a causal
LM (``logp[:, t] = log pi(ids[t] | ids[:t])``, 0 at t = 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import torch


@dataclass
class TrainSample:
    """One trajectory prepared for the loss (all per-token lists have ``len(token_ids)``)."""

    token_ids: list[int]
    loss_mask: list[int]
    segment_ids: list[int]
    behavior_logprobs: list[float]
    invalid: list[int]
    advantage: float | list[float] = 0.0
    reward: float = float("nan")
    group: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.token_ids)
        if n == 0:
            raise ValueError("TrainSample.token_ids: empty trajectory")
        for name in ("loss_mask", "segment_ids", "behavior_logprobs", "invalid"):
            value = getattr(self, name)
            if len(value) != n:
                raise ValueError(
                    f"TrainSample.{name}: length {len(value)} does not match token_ids ({n})"
                )
        if isinstance(self.advantage, (list, tuple)) and len(self.advantage) != n:
            raise ValueError(
                f"TrainSample.advantage: per-token list of length {len(self.advantage)}, expected {n}"
            )
        if self.loss_mask and self.loss_mask[0]:
            raise ValueError("TrainSample.loss_mask: the first token has no prefix and cannot be trained")

    @property
    def n_trainable(self) -> int:
        return int(sum(1 for m in self.loss_mask if m))


@dataclass
class Batch:
    """Padded tensors of a list of samples (``B`` rows, ``T`` = longest sample).

    ``input_ids`` long, ``attention_mask`` long (1 on real tokens), ``loss_mask`` float (1 on
    trainable tokens), ``segment_ids`` long (assistant turn id, -1 elsewhere), ``behavior_logprobs``
    float, ``advantages`` float (0 off the loss mask), ``invalid`` bool. ``old_logprobs`` and
    ``ref_logprobs`` are filled by the trainer.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    loss_mask: torch.Tensor
    segment_ids: torch.Tensor
    behavior_logprobs: torch.Tensor
    advantages: torch.Tensor
    invalid: torch.Tensor
    old_logprobs: torch.Tensor | None = None
    ref_logprobs: torch.Tensor | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.input_ids.shape)  # type: ignore[return-value]

    def to(self, device: torch.device | str) -> Batch:
        kwargs = {}
        for f in fields(self):
            value = getattr(self, f.name)
            kwargs[f.name] = value.to(device) if isinstance(value, torch.Tensor) else value
        return Batch(**kwargs)

    def select(self, rows: Sequence[int]) -> Batch:
        """The given rows, re-trimmed to their longest real length."""
        idx = torch.as_tensor(list(rows), dtype=torch.long)
        length = int(self.attention_mask[idx].sum(dim=1).max().item())
        kwargs = {}
        for f in fields(self):
            value = getattr(self, f.name)
            kwargs[f.name] = value[idx, :length] if isinstance(value, torch.Tensor) else value
        return Batch(**kwargs)


def collate(samples: Sequence[TrainSample], pad_id: int = 0) -> Batch:
    """Right-pad ``samples`` into a :class:`Batch`; advantages live only on trainable tokens."""
    if not samples:
        raise ValueError("collate: no samples")
    b = len(samples)
    t = max(len(s.token_ids) for s in samples)
    input_ids = torch.full((b, t), pad_id, dtype=torch.long)
    attention = torch.zeros((b, t), dtype=torch.long)
    loss_mask = torch.zeros((b, t), dtype=torch.float32)
    segments = torch.full((b, t), -1, dtype=torch.long)
    behavior = torch.zeros((b, t), dtype=torch.float32)
    adv = torch.zeros((b, t), dtype=torch.float32)
    invalid = torch.zeros((b, t), dtype=torch.bool)
    for i, s in enumerate(samples):
        n = len(s.token_ids)
        input_ids[i, :n] = torch.as_tensor(s.token_ids, dtype=torch.long)
        attention[i, :n] = 1
        mask = torch.as_tensor(s.loss_mask, dtype=torch.float32).clamp(0, 1)
        loss_mask[i, :n] = mask
        seg = torch.as_tensor(s.segment_ids, dtype=torch.long)
        segments[i, :n] = torch.where(mask > 0, seg, torch.full_like(seg, -1))
        behavior[i, :n] = torch.as_tensor(s.behavior_logprobs, dtype=torch.float32) * mask
        if isinstance(s.advantage, (list, tuple)):
            adv[i, :n] = torch.as_tensor(s.advantage, dtype=torch.float32) * mask
        else:
            adv[i, :n] = float(s.advantage) * mask
        invalid[i, :n] = torch.as_tensor(s.invalid, dtype=torch.bool) & (mask > 0)
    return Batch(input_ids, attention, loss_mask, segments, behavior, adv, invalid)


def plan_micro_batches(lengths: Sequence[int], token_budget: int) -> list[list[int]]:
    """Group sample indices into micro-batches with ``len(group) * max_len <= token_budget``.

    Samples are taken longest first (less padding); a sample longer than the budget gets its own
    micro-batch. The plan is deterministic for given lengths. Every index appears exactly once.
    """
    if token_budget < 1:
        raise ValueError(f"token_budget: must be >= 1, got {token_budget}")
    order = sorted(range(len(lengths)), key=lambda i: (-int(lengths[i]), i))
    plans: list[list[int]] = []
    current: list[int] = []
    current_max = 0
    for i in order:
        n = int(lengths[i])
        new_max = max(current_max, n)
        if current and new_max * (len(current) + 1) > token_budget:
            plans.append(current)
            current, current_max = [], 0
            new_max = n
        current.append(i)
        current_max = new_max
    if current:
        plans.append(current)
    return plans


def split_mini_batches(n: int, parts: int, generator: torch.Generator | None = None,
                       count: int | None = None) -> list[list[int]]:
    """Shuffle ``range(n)`` with ``generator`` and cut it into ``parts`` near-equal mini-batches
    (at most ``n``; exactly ``count`` when given, some possibly empty: FSDP ranks must agree)."""
    parts = count if count is not None else max(1, min(parts, n))
    perm = torch.randperm(n, generator=generator).tolist() if generator is not None else list(range(n))
    return [perm[k::parts] for k in range(parts)]


def token_logprobs(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    loss_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """``logp[b, t] = log pi(input_ids[b, t] | input_ids[b, :t])`` as float32 ``[B, T]`` (0 at t=0).

    Uses the model's logits at position ``t-1``; log-softmax is taken in float32 for stability.
    With ``loss_mask`` only the positions where it is non-zero are projected to the vocabulary
    (the LM head and the softmax dominate a small model's cost; prompt and observation tokens,
    most of an agent trajectory, need no logits); other positions are 0. An FSDP-wrapped model
    takes the full-logits path.
    """
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    body = getattr(model, "model", None)
    # an FSDP wrapper must run its own forward (it unshards the root's embeddings and head there)
    sharded = hasattr(model, "_fsdp_wrapped_module")
    if loss_mask is None or head is None or body is None or sharded:
        logits = model(input_ids=input_ids, attention_mask=attention_mask).logits  # [B, T, V]
        logits = logits[:, :-1, :].float()
        targets = input_ids[:, 1:]
        logp = torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        return torch.nn.functional.pad(logp, (1, 0), value=0.0)
    hidden = body(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # [B, T, H]
    want = loss_mask[:, 1:] > 0  # predict token t from position t-1
    rows, cols = want.nonzero(as_tuple=True)
    out = torch.zeros(input_ids.shape, dtype=torch.float32, device=input_ids.device)
    if rows.numel() == 0:
        return out + 0.0 * hidden.sum()  # keep the graph connected
    h = hidden[rows, cols]  # [N, H]
    logits = head(h).float()
    scale = getattr(model.config, "final_logit_softcapping", None)
    if scale:
        logits = torch.tanh(logits / scale) * scale
    lp = torch.log_softmax(logits, dim=-1).gather(-1, input_ids[rows, cols + 1].unsqueeze(-1)).squeeze(-1)
    return out.index_put((rows, cols + 1), lp)
