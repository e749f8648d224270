"""A fine-tuned Task Type encoder for the learned labeler (issue 33).

Every other learned-labeler feature is a frozen MiniLM embedding or a decision-record score read
by a linear model; none of the ~30 such levers measured in grouped CV moved Task Type L1 beyond
fold noise (docs/labels.md). This module trains the encoder itself: the packaged MiniLM, mean
pooled, with a linear head, fine-tuned end to end on the issue text paired with the changed lines
of its patch (the annotators labelled by the patch's intent), with square-root class weights
(as the linear model's). Trained on the corpus plus the Task Type supplement
(:func:`swetrain.label.corpus.load_supplement`: ~2x the training rows per fold), it lifts Task
Type L1 where more rows did not lift the linear model.

At prediction time its L1 probabilities are mixed with the linear model's:
``p = (1 - a) * p_linear + a * p_encoder`` (:func:`swetrain.label.learn.mix_task_type`, ``a`` =
``EncoderConfig.mix``). The fitted encoder is a folder next to the model file
(``<model>.task_encoder/``: the encoder in safetensors, its tokenizer, ``head.npz``, ``meta.json``).
Training is seeded and runs on CPU (bf16 autocast where the CPU computes bf16 natively) or CUDA.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from swetrain.label.adapters import Evidence
from swetrain.label.embed import mean_pool
from swetrain.label.weighting import sqrt_class_weights

ENCODER_VERSION = "tt-encoder-v1"
HEAD_FILE = "head.npz"
META_FILE = "meta.json"


class EncoderError(ValueError):
    """An encoder folder is missing, incomplete or does not fit."""


@dataclass(frozen=True)
class EncoderConfig:
    """Fine-tuning settings (the measured ones are the defaults; docs/labels.md)."""

    max_length: int = 256  # tokens of (statement, changed lines), truncated longest first
    epochs: int = 3
    batch_size: int = 16
    lr: float = 5e-5  # encoder
    head_lr: float = 1e-3
    weight_decay: float = 0.01
    statement_chars: int = 2000
    patch_chars: int = 1000
    mix: float = 0.5  # weight of the encoder's L1 probabilities against the linear model's
    seed: int = 0
    members: int = 1  # fine-tuned copies (seeds seed, seed+1, ...) whose probabilities are averaged


def _config_from(meta: dict[str, Any]) -> EncoderConfig:
    """The EncoderConfig saved in a folder's meta.json (fields a newer version added take their defaults)."""
    known = set(EncoderConfig.__dataclass_fields__)
    return EncoderConfig(**{k: v for k, v in meta.get("config", {}).items() if k in known})


def encoder_inputs(ev: Evidence, config: EncoderConfig) -> tuple[str, str]:
    """The (statement, changed lines of the patch) pair the encoder reads."""
    return ev.statement[: config.statement_chars] or " ", ev.patch_excerpt[: config.patch_chars] or " "


def _device():
    from swetrain.policy.hf import resolve_device

    return resolve_device(None)


def _autocast(device):
    """bf16 autocast where ``device`` computes bf16 natively (a bf16 GPU; a CPU with AMX / AVX-512 BF16), else none."""
    from swetrain.train.update import autocast_context

    return autocast_context(device, "bf16-native")


class TaskTypeEncoder:
    """MiniLM + mean pooling + a linear head over Task Type L1 classes."""

    def __init__(self, classes: list[str], config: EncoderConfig, encoder: Any, head: Any, tokenizer: Any, meta: dict[str, Any] | None = None):
        self.classes = list(classes)
        self.config = config
        self.encoder = encoder
        self.head = head
        self.tokenizer = tokenizer
        self.meta = dict(meta or {})
        self._digest: str | None = None

    # ---- construction -----------------------------------------------------------------------
    @staticmethod
    def _base(model_dir: str | Path | None) -> tuple[Any, Any, Path]:
        from swetrain.label.embed import EmbeddingUnavailable, load_encoder

        try:
            return load_encoder(model_dir)
        except EmbeddingUnavailable as exc:
            raise EncoderError(str(exc)) from exc

    @classmethod
    def train(cls, pairs: Sequence[tuple[str, str]], labels: Sequence[str], config: EncoderConfig = EncoderConfig(),
              model_dir: str | Path | None = None, progress: Callable[[int, int], None] | None = None) -> TaskTypeEncoder:
        """Fine-tune on ``pairs`` (statement, changed lines) with L1 ``labels``; deterministic given ``config.seed``."""
        import torch

        if len(pairs) != len(labels) or not pairs:
            raise EncoderError(f"need one label per input and at least one row, got {len(pairs)} inputs and {len(labels)} labels")
        classes = sorted(set(labels))
        torch.manual_seed(config.seed)
        encoder, tokenizer, base = cls._base(model_dir)
        device = _device()
        head = torch.nn.Linear(encoder.config.hidden_size, len(classes))
        model = cls(classes, config, encoder.to(device), head.to(device), tokenizer, {"base": str(base)})
        index = {c: i for i, c in enumerate(classes)}
        target = torch.tensor([index[v] for v in labels])
        weight = torch.tensor(sqrt_class_weights(labels, classes), dtype=torch.float32, device=device)
        opt = torch.optim.AdamW([{"params": encoder.parameters(), "lr": config.lr}, {"params": head.parameters(), "lr": config.head_lr}],
                                weight_decay=config.weight_decay)
        gen = torch.Generator().manual_seed(config.seed)
        steps_per_epoch = -(-len(pairs) // config.batch_size)
        total, step = steps_per_epoch * config.epochs, 0
        for _ in range(config.epochs):
            encoder.train()
            order = torch.randperm(len(pairs), generator=gen).tolist()
            for start in range(0, len(order), config.batch_size):
                idx = order[start : start + config.batch_size]
                with _autocast(device):
                    logits = model._logits([pairs[i] for i in idx])
                loss = torch.nn.functional.cross_entropy(logits.float(), target[idx].to(device), weight=weight)
                opt.zero_grad()
                loss.backward()
                opt.step()
                step += 1
                if progress is not None:
                    progress(step, total)
        encoder.eval()
        model.meta.update({"version": ENCODER_VERSION, "rows": len(pairs), "config": asdict(config)})
        return model

    # ---- prediction -------------------------------------------------------------------------
    def _logits(self, pairs: Sequence[tuple[str, str]]):
        first, second = zip(*pairs)
        batch = self.tokenizer(list(first), list(second), truncation="longest_first", max_length=self.config.max_length,
                               padding=True, return_tensors="pt").to(next(self.encoder.parameters()).device)
        hidden = self.encoder(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
        return self.head(mean_pool(hidden, batch["attention_mask"]))

    def proba(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """(n, len(classes)) softmax probabilities."""
        import torch

        out = np.zeros((len(pairs), len(self.classes)), dtype=np.float64)
        if not pairs:
            return out
        device = next(self.encoder.parameters()).device
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                with _autocast(device):
                    logits = self._logits([pairs[i] for i in idx])
                out[idx] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
        return out

    # ---- persistence ------------------------------------------------------------------------
    def digest(self) -> str:
        """SHA-256 prefix of the classes and every weight (computed once: a fitted encoder does not change)."""
        if self._digest is None:
            h = hashlib.sha256(json.dumps(self.classes).encode())
            for t in (*self.encoder.state_dict().values(), *self.head.state_dict().values()):
                h.update(t.detach().float().cpu().numpy().tobytes())
            self._digest = h.hexdigest()[:16]
        return self._digest

    def save(self, folder: str | Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.encoder.save_pretrained(folder, safe_serialization=True)
        self.tokenizer.save_pretrained(folder)
        np.savez(folder / HEAD_FILE, weight=self.head.weight.detach().float().cpu().numpy(), bias=self.head.bias.detach().float().cpu().numpy())
        meta = {**self.meta, "classes": self.classes, "config": asdict(self.config), "digest": self.digest()}
        (folder / META_FILE).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, folder: str | Path) -> TaskTypeEncoder:
        import torch

        folder = Path(folder)
        if not (folder / META_FILE).exists() or not (folder / HEAD_FILE).exists():
            raise EncoderError(f"{folder}: not a Task Type encoder folder (no {META_FILE} / {HEAD_FILE}); retrain with `swetrain label train --task-encoder`")
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
        config = _config_from(meta)
        encoder, tokenizer, _ = cls._base(folder)
        with np.load(folder / HEAD_FILE) as z:
            weight, bias = torch.from_numpy(z["weight"]), torch.from_numpy(z["bias"])
        classes = list(meta["classes"])
        if weight.shape != (len(classes), encoder.config.hidden_size):
            raise EncoderError(f"{folder}: head shape {tuple(weight.shape)} does not fit {len(classes)} classes")
        head = torch.nn.Linear(weight.shape[1], weight.shape[0])
        with torch.no_grad():
            head.weight.copy_(weight)
            head.bias.copy_(bias)
        device = _device()
        return cls(classes, config, encoder.to(device).eval(), head.to(device), tokenizer, meta)


class TaskTypeEnsemble:
    """Encoders fine-tuned on the same rows with seeds ``seed .. seed + n - 1``; their probabilities are averaged.

    Fine-tuning a small encoder on ~1,000 rows is noisy from seed to seed (the head's init and the
    batch order); the mean of a few members is steadier than any one (docs/labels.md). It has the
    single encoder's interface (``classes``, ``config``, ``meta``, ``proba``, ``digest``, ``save``) and
    is saved as ``member_<i>/`` encoder folders under one ``meta.json``.
    """

    def __init__(self, members: Sequence[TaskTypeEncoder], config: EncoderConfig):
        if not members:
            raise EncoderError("an encoder ensemble needs at least one member")
        classes = members[0].classes
        for i, m in enumerate(members):
            if m.classes != classes:
                raise EncoderError(f"ensemble member {i} has classes {m.classes}, member 0 has {classes}")
        self.members = list(members)
        self.classes = list(classes)
        self.config = config
        self.meta = {**members[0].meta, "config": asdict(config), "members": [m.digest() for m in members]}
        self._digest: str | None = None

    def proba(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        return np.mean([m.proba(pairs, batch_size) for m in self.members], axis=0)

    def digest(self) -> str:
        if self._digest is None:
            self._digest = hashlib.sha256(json.dumps([m.digest() for m in self.members]).encode()).hexdigest()[:16]
        return self._digest

    def save(self, folder: str | Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for i, m in enumerate(self.members):
            m.save(folder / f"member_{i}")
        meta = {**self.meta, "version": ENCODER_VERSION, "ensemble": len(self.members), "classes": self.classes, "digest": self.digest()}
        (folder / META_FILE).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, folder: str | Path) -> TaskTypeEnsemble:
        folder = Path(folder)
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
        n = int(meta["ensemble"])
        members = [TaskTypeEncoder.load(folder / f"member_{i}") for i in range(n)]
        ens = cls(members, _config_from(meta))
        if meta.get("digest") and ens.digest() != meta["digest"]:
            raise EncoderError(f"{folder}: its members are not the ones the ensemble was saved with (digest differs)")
        return ens


def train_task_encoder(pairs: Sequence[tuple[str, str]], labels: Sequence[str], config: EncoderConfig = EncoderConfig(),
                       model_dir: str | Path | None = None,
                       progress: Callable[[int, int], None] | None = None) -> TaskTypeEncoder | TaskTypeEnsemble:
    """One encoder (``config.members == 1``) or an ensemble of ``config.members`` seeds; ``progress``
    sees the steps of all members as one count."""
    if config.members < 1:
        raise EncoderError(f"members must be at least 1, got {config.members}")
    if config.members == 1:
        return TaskTypeEncoder.train(pairs, labels, config, model_dir, progress)
    members = []
    for i in range(config.members):
        def member_progress(step: int, total: int, i: int = i) -> None:
            if progress is not None:
                progress(i * total + step, config.members * total)
        members.append(TaskTypeEncoder.train(pairs, labels, replace(config, seed=config.seed + i, members=1), model_dir, member_progress))
    return TaskTypeEnsemble(members, config)


def load_task_encoder(folder: str | Path) -> TaskTypeEncoder | TaskTypeEnsemble:
    """A saved encoder or ensemble folder (:meth:`TaskTypeEncoder.save` / :meth:`TaskTypeEnsemble.save`)."""
    folder = Path(folder)
    meta_path = folder / META_FILE
    if meta_path.exists():
        try:
            ensemble = "ensemble" in json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise EncoderError(f"{meta_path}: unreadable ({exc})") from None
        if ensemble:
            try:
                return TaskTypeEnsemble.load(folder)
            except (OSError, KeyError, ValueError, TypeError) as exc:
                if isinstance(exc, EncoderError):
                    raise
                raise EncoderError(f"{folder}: not a Task Type encoder ensemble ({exc})") from None
    return TaskTypeEncoder.load(folder)
