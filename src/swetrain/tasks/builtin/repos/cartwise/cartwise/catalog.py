"""Products and stock levels."""
from __future__ import annotations

from dataclasses import dataclass


class OutOfStock(ValueError):
    """Not enough units available."""


@dataclass(frozen=True)
class Product:
    """A sellable item; ``price`` in cents, ``weight`` in grams."""

    sku: str
    name: str
    price: int
    category: str = "general"
    taxable: bool = True
    weight: int = 0

    def __post_init__(self) -> None:
        if self.price < 0:
            raise ValueError(f"price of {self.sku} must be non-negative")


class Inventory:
    """Stock per SKU with reservations; available = on hand - reserved."""

    def __init__(self, stock: dict[str, int] | None = None) -> None:
        self.on_hand: dict[str, int] = dict(stock or {})
        self.reserved: dict[str, int] = {}

    def available(self, sku: str) -> int:
        return self.on_hand.get(sku, 0) - self.reserved.get(sku, 0)

    def reserve(self, sku: str, qty: int) -> None:
        """Hold ``qty`` units; raises ``OutOfStock`` if fewer are available."""
        if qty <= 0:
            raise ValueError("quantity must be positive")
        if self.available(sku) < qty:
            raise OutOfStock(f"only {self.available(sku)} of {sku} available, wanted {qty}")
        self.reserved[sku] = self.reserved.get(sku, 0) + qty

    def release(self, sku: str, qty: int) -> None:
        """Give back up to ``qty`` reserved units (never below zero)."""
        self.reserved[sku] = max(0, self.reserved.get(sku, 0) - qty)

    def commit(self, sku: str, qty: int) -> None:
        """Ship ``qty`` reserved units: both on-hand and reserved drop by ``qty``."""
        if self.reserved.get(sku, 0) < qty:
            raise ValueError(f"cannot commit {qty} of {sku}: only {self.reserved.get(sku, 0)} reserved")
        self.reserved[sku] -= qty
        self.on_hand[sku] -= qty

    def restock(self, sku: str, qty: int) -> None:
        if qty <= 0:
            raise ValueError("quantity must be positive")
        self.on_hand[sku] = self.on_hand.get(sku, 0) + qty
