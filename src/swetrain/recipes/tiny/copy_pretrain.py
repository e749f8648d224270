"""Copy pretraining: give a randomly initialised tiny policy an induction head before SFT.

Every scripted repair demonstration needs content-based copying (the grep names a function the
issue or a traceback names; the edit repeats a line the grep showed). The tiny model trained only
on demonstrations and drills never learns it (:mod:`swetrain.recipes.tiny.copy_skill` measures 0.000), and
training the 4-layer preset on a copy task stays on the pre-induction plateau for thousands of steps
on CPU (docs/training.md). A **2-layer** model of the same width forms the circuit abruptly after
~1,500 steps of ``span, gap, span`` sequences (measured: top-1 copy accuracy 0.98 in ~2.5 min on 2
cores), so the recipe is:

1. :func:`copy_pretrain` a shallow copy of the model (the first ``start_layers`` layers) on
   repeated spans, with loss on the repetition only. Spans are random token ids (first from a
   small id range, so the circuit forms quickly, then from the whole vocabulary so it generalises
   to every id) mixed with spans of real Python code encoded by the policy's tokenizer.
2. :func:`grow_layers` back to the full depth: the new layers are appended with their residual
   outputs (attention ``o_proj`` and MLP ``down_proj``) set to zero, so the grown model computes
   exactly the function of the shallow one and SFT starts with the copy circuit intact
   (progressive stacking with identity initialisation).

Everything is plain torch on a transformers decoder (Qwen2/Llama-style ``model.model.layers``).
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class CopyPretrainConfig:
    easy_steps: int = 4000  # at most this many easy steps (stops earlier once the circuit formed)
    easy_until: float = 0.9  # ... i.e. when the running accuracy on easy batches reaches this
    steps: int = 1500  # then this many steps on the whole vocabulary and real code
    start_layers: int = 2  # depth trained on the copy task (then grown back to the model's depth)
    batch: int = 32
    span: int = 32  # spans of span//2 .. span tokens
    max_gap: int = 16  # 0 .. max_gap random tokens between the two occurrences
    lr: float = 3e-3
    warmup_steps: int = 100
    easy_vocab: int = 500  # easy phase: random ids from [10, 10 + easy_vocab)
    code_fraction: float = 0.5  # after the easy phase: share of sequences whose span is real code
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("easy_steps", "steps", "start_layers", "batch", "warmup_steps", "easy_vocab"):
            if getattr(self, name) < 1:
                raise ValueError(f"CopyPretrainConfig.{name} must be >= 1 (got {getattr(self, name)})")
        if self.span < 4:
            raise ValueError(f"CopyPretrainConfig.span must be >= 4 (got {self.span})")
        if self.max_gap < 0:
            raise ValueError(f"CopyPretrainConfig.max_gap must be >= 0 (got {self.max_gap})")
        for name in ("easy_until", "code_fraction"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"CopyPretrainConfig.{name} must be in [0, 1] (got {getattr(self, name)})")


def _layers(model: Any) -> torch.nn.ModuleList:
    body = getattr(model, "model", None)
    layers = getattr(body, "layers", None)
    if not isinstance(layers, torch.nn.ModuleList):
        raise TypeError(f"{type(model).__name__}: expected a decoder with model.model.layers (Qwen2/Llama-style)")
    return layers


def _set_depth(model: Any, n: int) -> None:
    model.config.num_hidden_layers = n
    if getattr(model.config, "layer_types", None) is not None:
        model.config.layer_types = list(model.config.layer_types)[:1] * n
    for i, layer in enumerate(_layers(model)):
        attn = getattr(layer, "self_attn", None)
        if attn is not None and hasattr(attn, "layer_idx"):
            attn.layer_idx = i


def truncate_layers(model: Any, n: int) -> Any:
    """``model`` keeping only its first ``n`` decoder layers (in place; returned for chaining)."""
    layers = _layers(model)
    if not 1 <= n <= len(layers):
        raise ValueError(f"truncate_layers: n must be in [1, {len(layers)}] (got {n})")
    model.model.layers = torch.nn.ModuleList(list(layers)[:n])
    _set_depth(model, n)
    return model


def grow_layers(model: Any, n: int) -> Any:
    """Append decoder layers until ``model`` has ``n``, each a copy of the last layer whose residual
    outputs (``self_attn.o_proj``, ``mlp.down_proj``) are zero: the grown model computes exactly the
    same logits as before (a pre-norm residual block with zero outputs is the identity)."""
    layers = _layers(model)
    if n < len(layers):
        raise ValueError(f"grow_layers: n={n} is below the current depth {len(layers)}")
    grown = list(layers)
    while len(grown) < n:
        new = copy.deepcopy(grown[-1])
        for name in ("self_attn.o_proj", "mlp.down_proj"):
            module = new.get_submodule(name)
            with torch.no_grad():
                module.weight.zero_()
                if getattr(module, "bias", None) is not None:
                    module.bias.zero_()
        grown.append(new)
    model.model.layers = torch.nn.ModuleList(grown)
    _set_depth(model, n)
    return model


def _code_repeat(usable: Sequence[Sequence[int]], k: int, gap: int, rng: random.Random) -> list[int]:
    """A ``k``-token span of one of ``usable`` (each longer than ``k + gap``), the ``gap`` tokens that
    follow it, and the span again."""
    ids = rng.choice(usable)
    start = rng.randrange(0, len(ids) - k - gap)
    return list(ids[start:start + k + gap]) + list(ids[start:start + k])


def copy_batch(
    easy: bool, config: CopyPretrainConfig, vocab: int, code: Sequence[Sequence[int]], rng: random.Random
) -> tuple[torch.Tensor, torch.Tensor]:
    """One ``[batch, T]`` batch of ``span, gap, span`` sequences and its loss mask (1 on the second
    span's tokens 2..n: the first token of the repetition cannot be predicted). ``easy``: random
    ids from a small range only; else random ids from the whole vocabulary or real ``code``."""
    n = rng.randint(max(2, config.span // 2), config.span)
    gap = rng.randint(0, config.max_gap)
    hi = min(vocab, 10 + config.easy_vocab) if easy else vocab
    usable = [s for s in code if len(s) > n + gap] if code and not easy else []
    rows = []
    for _ in range(config.batch):
        if code and not easy and rng.random() < config.code_fraction and usable:
            rows.append(_code_repeat(usable, n, gap, rng))
        else:
            span = [rng.randrange(10, hi) for _ in range(n)]
            rows.append(span + [rng.randrange(10, hi) for _ in range(gap)] + span)
    x = torch.tensor(rows, dtype=torch.long)
    mask = torch.zeros_like(x, dtype=torch.float32)
    mask[:, n + gap + 1:] = 1.0
    return x, mask


def copy_pretrain(
    model: Any,
    config: CopyPretrainConfig,
    code: Sequence[Sequence[int]] = (),
    on_step: Callable[[int, str, dict[str, float]], None] | None = None,
) -> dict[str, float]:
    """Train ``model`` (in place) on repeated spans; returns the run's figures.

    Easy phase: random ids from a small range, until the running accuracy reaches
    ``config.easy_until`` (the induction circuit forms abruptly) or ``config.easy_steps`` pass; then
    ``config.steps`` steps on the whole vocabulary mixed with spans of real ``code`` (token-id
    sequences; long files work best). ``on_step(step, phase, stats)`` after each step.
    """
    from swetrain.train.batch import token_logprobs

    rng = random.Random(config.seed)
    device = next(model.parameters()).device
    vocab = int(model.config.vocab_size)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, betas=(0.9, 0.98), weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / config.warmup_steps))
    model.train()
    started = time.monotonic()
    stats = {"loss": float("nan"), "accuracy": 0.0}
    running, easy, easy_steps, step = 0.0, True, 0, 0
    while step < easy_steps + config.steps:
        step += 1
        easy = easy and step <= config.easy_steps and running < config.easy_until  # never returns
        easy_steps += int(easy)
        x, mask = copy_batch(easy, config, vocab, code, rng)
        x, mask = x.to(device), mask.to(device)
        logp = token_logprobs(model, x, torch.ones_like(x), mask)
        loss = -(logp * mask).sum() / mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        # share of repeated tokens predicted with probability > 1/2 (a lower bound on top-1 accuracy)
        acc = float(((logp.detach() > -0.6931).float() * mask).sum() / mask.sum())
        running = 0.9 * running + 0.1 * acc if easy else running
        stats = {"loss": float(loss.detach()), "accuracy": acc}
        if on_step is not None:
            on_step(step, "easy" if easy else "full", stats)
    model.eval()
    return {**stats, "easy_steps": easy_steps, "steps": step, "seconds": round(time.monotonic() - started, 1)}


def copy_pretrained(model: Any, config: CopyPretrainConfig, code: Sequence[Sequence[int]] = (),
                    on_step: Callable[[int, str, dict[str, float]], None] | None = None) -> tuple[Any, dict[str, float]]:
    """Truncate ``model`` to ``config.start_layers``, :func:`copy_pretrain` it, grow it back to its
    original depth; returns the model and the run's stats."""
    depth = len(_layers(model))
    truncate_layers(model, min(config.start_layers, depth))
    stats = copy_pretrain(model, config, code, on_step)
    grow_layers(model, depth)
    return model, stats


def code_corpus(tokenizer: Any, stdlib_files: int = 150, seed: int = 0) -> list[list[int]]:
    """Token ids of the drill sources (:func:`swetrain.recipes.tiny.drills.drill_sources`: the built-in
    TRAIN repositories and a sample of the standard library; never a held-out repository)."""
    from swetrain.recipes.tiny.drills import drill_sources

    sources, _ = drill_sources(stdlib_files, seed)
    return [tokenizer.encode(s.text, add_special_tokens=False, verbose=False) for s in sources]


def copy_samples(code: Sequence[Sequence[int]], n: int, config: CopyPretrainConfig, seed: int = 0) -> list[Any]:
    """``n`` SFT samples (:class:`~swetrain.train.batch.TrainSample`) of a real code span, a gap and
    the span again, with loss on the repetition: mixed into SFT so the copy circuit is kept."""
    from swetrain.train.batch import TrainSample

    rng = random.Random(seed)
    usable = [s for s in code if len(s) > config.span + config.max_gap]
    if not usable:
        raise ValueError(f"copy_samples: no code sequence is longer than {config.span + config.max_gap} tokens")
    out = []
    for _ in range(n):
        k, gap = rng.randint(max(2, config.span // 2), config.span), rng.randint(0, config.max_gap)
        seq = _code_repeat(usable, k, gap, rng)
        mask = [0] * (k + gap) + [0] + [1] * (k - 1)
        out.append(TrainSample(token_ids=seq, loss_mask=mask, segment_ids=[0] * len(seq), behavior_logprobs=[0.0] * len(seq),
                               invalid=[0] * len(seq), advantage=1.0, group="copy"))
    return out


@torch.no_grad()
def induction_accuracy(model: Any, *, vocab_hi: int = 2000, span: int = 32, n: int = 16, seed: int = 0,
                       min_gap: int = 0, max_gap: int = 16) -> float:
    """Top-1 accuracy on tokens 2..span of a span's second occurrence (``span`` random ids in
    ``[10, vocab_hi)``, then ``min_gap``-``max_gap`` random ids, then the span again). The default
    gap is short; in a real episode the text to copy lies hundreds of tokens back (a path in the
    traceback, a line in the grep output), which a long ``min_gap`` measures."""
    if span < 2 or n < 1 or not 0 <= min_gap <= max_gap:
        raise ValueError(f"induction_accuracy: need span >= 2, n >= 1 and 0 <= min_gap <= max_gap "
                         f"(got span={span}, n={n}, min_gap={min_gap}, max_gap={max_gap})")
    vocab_hi = min(vocab_hi, int(model.config.vocab_size))
    gen = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    hits = total = 0
    for _ in range(n):
        first = torch.randint(10, vocab_hi, (span,), generator=gen)
        gap = torch.randint(10, vocab_hi, (int(torch.randint(min_gap, max_gap + 1, (1,), generator=gen)),), generator=gen)
        x = torch.cat([first, gap, first]).unsqueeze(0).to(device)
        pred = model(input_ids=x).logits[0].argmax(-1)
        start = span + gap.numel()  # position of the second occurrence's first token
        hits += int((pred[start:-1] == x[0, start + 1:]).sum())
        total += span - 1
    return hits / total
