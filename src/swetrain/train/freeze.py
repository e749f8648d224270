"""Train only the top of a decoder (``train.trainable_layers``): a CPU lever for the RL update.

Freezing the lower blocks keeps their forward but drops their backward and their optimizer state:
autograd stops at the lowest trainable block, because nothing below it needs a gradient. Which
blocks stay trainable is the *top* ``n`` of the decoder stack plus the final norm; the embeddings
(tied to the output layer in SmolLM2-style models) stay frozen. See docs/training.md, "RL step
levers".
"""

from __future__ import annotations

from typing import Any


def decoder_layers(model: Any) -> Any:
    """The decoder's block list (``model.model.layers`` in Llama/Qwen/SmolLM2-style models)."""
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else getattr(model, "model", None)
    layers = getattr(decoder, "layers", None)
    if layers is None:
        raise ValueError(f"train.trainable_layers: {type(model).__name__} has no decoder block list "
                         "(model.model.layers); use train.trainable_layers=null")
    return layers


def train_top_layers(model: Any, n: int | None) -> int:
    """Freeze every parameter except the top ``n`` decoder blocks and the final norm; ``None``
    leaves the model as it is. Returns the number of trainable parameters."""
    if n is None:
        return sum(p.numel() for p in model.parameters() if p.requires_grad)
    layers = decoder_layers(model)
    if not 1 <= n <= len(layers):
        raise ValueError(f"train.trainable_layers={n}: the model has {len(layers)} decoder blocks (choose 1..{len(layers)})")
    model.requires_grad_(False)
    for block in list(layers)[len(layers) - n:]:
        block.requires_grad_(True)
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else model.model
    norm = getattr(decoder, "norm", None)
    if norm is not None:
        norm.requires_grad_(True)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
