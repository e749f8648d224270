"""Name -> function registries (in the style of verl's ``register_adv_est``/``register_policy_loss``).

A :class:`Registry` maps a string name to a callable. ``register(name)`` is a decorator that adds a
function; ``get(name)`` returns it or raises a ``ValueError`` listing every registered name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

F = TypeVar("F", bound=Callable)


class Registry(Generic[F]):
    """A named collection of functions of one kind (``kind`` appears in error messages)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._fns: dict[str, F] = {}

    def register(self, name: str, *, override: bool = False) -> Callable[[F], F]:
        """Decorator adding ``fn`` under ``name``; re-registering a name needs ``override=True``."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.kind} name must be a non-empty string, got {name!r}")

        def deco(fn: F) -> F:
            if not callable(fn):
                raise ValueError(f"{self.kind} {name!r}: registered object must be callable")
            existing = self._fns.get(name)
            if existing is not None and existing is not fn and not override:
                raise ValueError(
                    f"{self.kind} {name!r} is already registered (to {existing.__qualname__}); "
                    "pass override=True to replace it"
                )
            self._fns[name] = fn
            return fn

        return deco

    def get(self, name: str) -> F:
        try:
            return self._fns[name]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown {self.kind} {name!r}; registered: {', '.join(sorted(self._fns)) or '(none)'}"
            ) from None

    def names(self) -> list[str]:
        return sorted(self._fns)

    def __contains__(self, name: object) -> bool:
        return name in self._fns
