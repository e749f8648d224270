"""Name -> entry registries (in the style of verl's ``register_adv_est``/``register_policy_loss``).

A :class:`Registry` maps a string name to one entry: a function (advantage estimators) or a spec
that wraps one (policy losses: :class:`swetrain.algos.losses.PolicyLossSpec`). ``register(name)``
is a decorator that adds a function, ``add(name, entry)`` adds any entry; ``get(name)`` returns it
or raises a ``ValueError`` listing every registered name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def _describe(entry: Any) -> str:
    """A short name of an entry for error messages (a function's, or the function of a spec)."""
    fn = getattr(entry, "fn", entry)
    return getattr(fn, "__qualname__", repr(entry))


class Registry(Generic[T]):
    """A named collection of entries of one kind (``kind`` appears in error messages)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._fns: dict[str, T] = {}  # name -> entry (functions, or specs wrapping one)

    def add(self, name: str, entry: T, *, override: bool = False) -> T:
        """Add ``entry`` under ``name``; replacing a different entry needs ``override=True``
        (re-adding an equal entry, e.g. on a module reload, is a no-op)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.kind} name must be a non-empty string, got {name!r}")
        existing = self._fns.get(name)
        if existing is not None and existing != entry and not override:
            raise ValueError(
                f"{self.kind} {name!r} is already registered (to {_describe(existing)}); "
                "pass override=True to replace it"
            )
        self._fns[name] = entry
        return entry

    def register(self, name: str, *, override: bool = False) -> Callable[[T], T]:
        """Decorator adding the callable ``fn`` under ``name`` (see :meth:`add`)."""

        def deco(fn: T) -> T:
            if not callable(fn):
                raise ValueError(f"{self.kind} {name!r}: registered object must be callable")
            return self.add(name, fn, override=override)

        return deco

    def remove(self, name: str) -> T | None:
        """Drop ``name`` (tests register throw-away entries); returns the entry or None."""
        return self._fns.pop(name, None)

    def get(self, name: str) -> T:
        try:
            return self._fns[name]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown {self.kind} {name!r}; registered: {', '.join(sorted(self._fns)) or '(none)'}"
            ) from None

    def names(self) -> list[str]:
        return sorted(self._fns)

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._fns.items())

    def __contains__(self, name: object) -> bool:
        return name in self._fns
