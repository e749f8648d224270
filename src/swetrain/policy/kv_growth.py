"""A KV cache layer that appends in place: decode steps write into spare room instead of copying.

transformers' ``DynamicLayer.update`` appends a step's key/value states with ``torch.cat``, which
copies the layer's whole cache at every decode step. On CPU, for SmolLM2-135M at 8 rows and ~2,500
tokens of context, those copies were a quarter of an evaluation's time (py-spy, docs/policy.md).
``GrowingLayer`` (:func:`growing_layer_class`) keeps each layer's states in a buffer with spare room along the sequence
axis; ``keys``/``values`` are views of its filled part, and an update writes the new columns into
the spare room. When the room is used up, or when other code replaced ``keys``/``values`` (row
selection, trimming leading padding, cropping), the next update copies once into a new buffer
with room again, so every existing caller of a ``DynamicLayer`` keeps working unchanged.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["fill_cache", "growing_layer_class", "grow_in_place"]


def _spare(length: int) -> int:
    """Room added on a reallocation: a quarter of the length, at least 128 columns (amortised O(1) copies per token)."""
    return max(128, length // 4)


@lru_cache(maxsize=1)
def growing_layer_class() -> type:
    """The ``GrowingLayer`` class, defined on first use so that importing this module does not import transformers."""
    from transformers.cache_utils import DynamicLayer

    class GrowingLayer(DynamicLayer):
        """A ``DynamicLayer`` whose ``update`` writes into spare room (module docstring)."""

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._key_buffer: Any = None
            self._value_buffer: Any = None
            self._filled = 0

        @classmethod
        def from_layer(cls, layer: Any) -> Any:
            """A growing layer holding ``layer``'s states (no copy until the first update)."""
            if not layer.is_initialized or layer.keys is None:
                return cls()
            return cls.holding(layer.keys, layer.values)

        @classmethod
        def holding(cls, keys: Any, values: Any) -> Any:
            """A growing layer whose states are ``keys``/``values`` themselves (never written to:
            the first update copies them into a buffer with room)."""
            grown = cls()
            grown.keys, grown.values, grown.is_initialized, grown.device = keys, values, True, keys.device
            return grown

        @classmethod
        def stacked(cls, parts: list[tuple[Any, Any]], width: int) -> Any:
            """The rows of ``parts`` ((keys, values) pairs of [rows, heads, w, dim], w <= ``width``)
            stacked in one buffer, each right-aligned to ``width`` columns after zeros (left padding),
            with room after them: one copy of each part, and the next decode step appends in place."""
            first_k, first_v = parts[0]
            grown = cls()
            grown._new_buffers(first_k, first_v, sum(k.shape[0] for k, _ in parts), width + _spare(width))
            start = 0
            for keys, values in parts:
                end, pad = start + keys.shape[0], width - keys.shape[-2]
                for buffer, states in ((grown._key_buffer, keys), (grown._value_buffer, values)):
                    buffer[start:end, :, :pad].zero_()  # masked columns: zeros, never uninitialised memory
                    buffer[start:end, :, pad:width] = states
                start = end
            grown.is_initialized, grown.device = True, first_k.device
            grown._view_filled(width)
            return grown

        def _new_buffers(self, keys_like: Any, values_like: Any, rows: int, capacity: int) -> None:
            """Empty key/value buffers of ``rows`` rows and ``capacity`` columns, shaped and typed like the given states."""
            self._key_buffer = keys_like.new_empty((rows, keys_like.shape[1], capacity, keys_like.shape[3]))
            self._value_buffer = values_like.new_empty((rows, values_like.shape[1], capacity, values_like.shape[3]))

        def _view_filled(self, width: int) -> None:
            """``keys``/``values`` become views of the buffers' first ``width`` columns."""
            self._filled = width
            self.keys, self.values = self._key_buffer[..., :width, :], self._value_buffer[..., :width, :]

        def _views_current(self, extra: int) -> bool:
            """Whether ``keys``/``values`` are still this layer's views and ``extra`` columns fit."""
            buffer = self._key_buffer
            return (buffer is not None and self.keys is not None and self.values is not None
                    and self.keys.data_ptr() == buffer.data_ptr()
                    and self.values.data_ptr() == self._value_buffer.data_ptr()
                    and self.keys.shape[:-2] == buffer.shape[:-2] and self.keys.shape[-2] == self._filled
                    and self._filled + extra <= buffer.shape[-2])

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            new = key_states.shape[-2]
            if not self._views_current(new):
                self._reallocate(key_states, value_states, new)
            end = self._filled + new
            self._key_buffer[..., self._filled:end, :] = key_states
            self._value_buffer[..., self._filled:end, :] = value_states
            self._view_filled(end)
            return self.keys, self.values

        def _reallocate(self, key_states: Any, value_states: Any, new: int) -> None:
            """Copy the current states (whatever ``keys``/``values`` now hold) into buffers with room for ``new`` more."""
            held = self.keys is not None and self.keys.numel() > 0
            length = self.keys.shape[-2] if held else 0
            self._new_buffers(key_states, value_states, key_states.shape[0], length + new + _spare(length + new))
            if held:
                self._key_buffer[..., :length, :] = self.keys
                self._value_buffer[..., :length, :] = self.values
            self._filled = length

        def keep(self, rows: Any, first: int = 0) -> None:
            """Keep only ``rows`` (an index tensor) and the columns from ``first`` on, in one copy into
            buffers with room (what a row selection followed by a trim costs in two or three)."""
            width = self.keys.shape[-2] - first
            keys, values = self.keys, self.values
            self._new_buffers(keys, values, len(rows), width + _spare(width))
            _select_rows_into(keys[..., first:, :], rows, self._key_buffer[..., :width, :])
            _select_rows_into(values[..., first:, :], rows, self._value_buffer[..., :width, :])
            self._view_filled(width)

        def reset(self) -> None:
            super().reset()
            self._key_buffer = self._value_buffer = None
            self._filled = 0

    return GrowingLayer


def _select_rows_into(states: Any, rows: Any, out: Any) -> None:
    """``out[i] = states[rows[i]]`` (batch axis), copied straight into ``out`` (a view), no temporary."""
    for target, source in enumerate(rows.tolist()):
        out[target].copy_(states[source])


def grow_in_place(cache: Any) -> Any:
    """Turn the plain full-attention layers of a transformers ``DynamicCache`` into
    ``GrowingLayer`` (same states, no copy); other layer kinds are left as they are.
    Returns ``cache``."""
    layers = getattr(cache, "layers", None)
    if layers is None:
        return cache
    growing = growing_layer_class()
    base = growing.__mro__[1]
    for index, layer in enumerate(layers):
        if type(layer) is base:
            layers[index] = growing.from_layer(layer)
    return cache


def fill_cache(cache: Any, layers: list[Any]) -> Any:
    """Put ``layers`` (``GrowingLayer`` instances, one per model layer) into an empty transformers
    ``DynamicCache`` built from the model's config, in place of its plain full-attention layers.
    Raises ``ValueError`` if the cache has another number of layers or another layer kind."""
    base = growing_layer_class().__mro__[1]
    if len(cache.layers) != len(layers) or any(type(layer) is not base for layer in cache.layers):
        raise ValueError(f"fill_cache: a cache of {len(cache.layers)} plain full-attention layers is needed "
                         f"for {len(layers)} layers, got {sorted({type(x).__name__ for x in cache.layers})}")
    cache.layers[:] = layers
    return cache
