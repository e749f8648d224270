"""``SFTTrainer``: supervised fine-tuning on agent trajectories, loss on assistant tokens only.

Used for the warm start of the CPU base policy (scripted repair demonstrations) and for Repair SFT
(seed 000: reward-filtered replay of verified successes, ``log pi(tau | x)`` summed over assistant
tokens only; prompt, tool observations and copied failure context are conditioning input).
The loss is the token-mean negative log-likelihood over the assistant tokens of each batch
(``batch_tokens`` padded tokens per optimizer step, split into micro-batches by token budget with
exact gradient accumulation), AdamW with a cosine schedule and warmup, gradient clipping, bf16
autocast on CUDA and float32 on CPU.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from swetrain.train.batch import TrainSample, collate, plan_micro_batches, token_logprobs
from swetrain.train.update import autocast_context, cosine_with_warmup


@dataclass
class SFTConfig:
    epochs: int = 3
    lr: float = 1e-3
    min_lr_ratio: float = 0.1
    weight_decay: float = 0.0
    warmup_steps: int = 5
    grad_clip: float = 1.0
    batch_tokens: int = 16384  # padded tokens per optimizer step
    micro_batch_tokens: int = 8192
    seed: int = 0
    precision: str = "auto"

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_tokens", "micro_batch_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"SFTConfig.{name} must be >= 1, got {getattr(self, name)}")
        if not self.lr > 0:
            raise ValueError(f"SFTConfig.lr must be > 0, got {self.lr}")


def sample_for_sft(traj: Any) -> TrainSample:
    """A trajectory as an SFT example: loss on the ids the agent generated (assistant mask)."""
    n = len(traj.token_ids)
    return TrainSample(
        token_ids=list(traj.token_ids),
        loss_mask=[int(m) for m in traj.assistant_mask],
        segment_ids=[int(s) for s in traj.segment_ids],
        behavior_logprobs=[0.0] * n,
        invalid=[0] * n,
        advantage=1.0,
        group=traj.instance_id,
    )


class SFTTrainer:
    """Fine-tunes a transformers causal LM on :class:`TrainSample` examples (assistant tokens)."""

    def __init__(self, model: torch.nn.Module, tokenizer: Any, config: SFTConfig | None = None, device: str | None = None):
        self.config = config or SFTConfig()
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model = model.to(self.device)
        self.tokenizer = tokenizer
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0)

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike, config: SFTConfig | None = None, device: str | None = None) -> SFTTrainer:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
        return cls(model, tok, config, device)

    def _batches(self, samples: Sequence[TrainSample], rng: random.Random) -> list[list[int]]:
        order = list(range(len(samples)))
        rng.shuffle(order)
        batches, cur, cur_tokens = [], [], 0
        for i in order:
            n = len(samples[i].token_ids)
            if cur and cur_tokens + n > self.config.batch_tokens:
                batches.append(cur)
                cur, cur_tokens = [], 0
            cur.append(i)
            cur_tokens += n
        if cur:
            batches.append(cur)
        return batches

    def train(
        self, samples: Sequence[TrainSample], on_step: Callable[[int, int, dict[str, float]], None] | None = None
    ) -> dict[str, float]:
        """Train for ``epochs``; ``on_step(step, total_steps, metrics)`` after each optimizer step."""
        samples = [s for s in samples if s.n_trainable > 0]
        if not samples:
            raise ValueError("SFTTrainer.train: no example has an assistant token to learn")
        cfg = self.config
        torch.manual_seed(cfg.seed)
        rng = random.Random(cfg.seed)
        epochs = [self._batches(samples, rng) for _ in range(cfg.epochs)]
        total = sum(len(e) for e in epochs)
        params = [p for p in self.model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        sched = cosine_with_warmup(opt, min(cfg.warmup_steps, max(total - 1, 0)), total, cfg.min_lr_ratio)
        self.model.train()
        step = 0
        started = time.monotonic()
        tokens_seen = 0
        last: dict[str, float] = {}
        for batches in epochs:
            for rows in batches:
                batch_samples = [samples[i] for i in rows]
                n_tok = sum(s.n_trainable for s in batch_samples)
                opt.zero_grad(set_to_none=True)
                loss_sum = 0.0
                plan = plan_micro_batches([len(s.token_ids) for s in batch_samples], cfg.micro_batch_tokens)
                for micro in plan:
                    b = collate([batch_samples[i] for i in micro], self.pad_id).to(self.device)
                    with autocast_context(self.device, cfg.precision):
                        logp = token_logprobs(self.model, b.input_ids, b.attention_mask, b.loss_mask).float()
                    nll = -(logp * b.loss_mask).sum() / n_tok
                    nll.backward()
                    loss_sum += float(nll.detach())
                    tokens_seen += int(b.attention_mask.sum())
                grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
                opt.step()
                sched.step()
                step += 1
                last = {
                    "loss": loss_sum,
                    "ppl": math.exp(min(loss_sum, 30.0)),
                    "grad_norm": float(grad_norm),
                    "lr": sched.get_last_lr()[0],
                    "tokens_per_s": tokens_seen / max(time.monotonic() - started, 1e-9),
                }
                if on_step is not None:
                    on_step(step, total, last)
        self.model.eval()
        return last

    @torch.no_grad()
    def evaluate(self, samples: Sequence[TrainSample]) -> float:
        """Mean NLL per assistant token of ``samples``."""
        self.model.eval()
        nll, n = 0.0, 0
        plan = plan_micro_batches([len(s.token_ids) for s in samples], self.config.micro_batch_tokens)
        for micro in plan:
            b = collate([samples[i] for i in micro], self.pad_id).to(self.device)
            logp = token_logprobs(self.model, b.input_ids, b.attention_mask, b.loss_mask).float()
            nll += float(-(logp * b.loss_mask).sum())
            n += int(b.loss_mask.sum())
        return nll / max(n, 1)

    def save(self, out_dir: str | os.PathLike) -> Path:
        """Save model (safetensors) and tokenizer to ``out_dir`` atomically (temp folder + rename)."""
        import shutil

        out = Path(out_dir)
        tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        self.model.save_pretrained(tmp, safe_serialization=True)
        self.tokenizer.save_pretrained(tmp)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
        return out
