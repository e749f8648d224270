"""The cart: lines of product and quantity, backed by inventory reservations."""
from __future__ import annotations

from .catalog import Inventory, Product


class CartError(ValueError):
    """Invalid cart operation."""


class Cart:
    """Lines keyed by SKU, in insertion order; at most ``max_qty`` units per line."""

    def __init__(self, inventory: Inventory, max_qty: int = 10) -> None:
        self.inventory = inventory
        self.max_qty = max_qty
        self.lines: dict[str, tuple[Product, int]] = {}

    def add(self, product: Product, qty: int = 1) -> int:
        """Add units (reserving stock); return the new line quantity."""
        if qty <= 0:
            raise CartError("quantity must be positive")
        current = self.quantity(product.sku)
        if current + qty > self.max_qty:
            raise CartError(f"at most {self.max_qty} of {product.sku} per order")
        self.inventory.reserve(product.sku, qty)
        self.lines[product.sku] = (product, current + qty)
        return current + qty

    def remove(self, sku: str, qty: int | None = None) -> int:
        """Remove ``qty`` units (all when ``None``), releasing stock; return the remaining quantity."""
        if sku not in self.lines:
            raise CartError(f"{sku} is not in the cart")
        product, current = self.lines[sku]
        take = current if qty is None or qty >= current else qty
        if take <= 0:
            raise CartError("quantity must be positive")
        self.inventory.release(sku, take)
        left = current - take
        if left == 0:
            del self.lines[sku]
        else:
            self.lines[sku] = (product, left)
        return left

    def set_quantity(self, product: Product, qty: int) -> None:
        """Make the line hold exactly ``qty`` units (0 removes it)."""
        current = self.quantity(product.sku)
        if qty < 0:
            raise CartError("quantity cannot be negative")
        if qty > current:
            self.add(product, qty - current)
        elif qty < current:
            self.remove(product.sku, current - qty)

    def quantity(self, sku: str) -> int:
        return self.lines[sku][1] if sku in self.lines else 0

    @property
    def item_count(self) -> int:
        return sum(q for _, q in self.lines.values())

    def line_total(self, sku: str) -> int:
        product, qty = self.lines[sku]
        return product.price * qty

    def subtotal(self) -> int:
        return sum(self.line_total(sku) for sku in self.lines)

    def weight(self) -> int:
        return sum(p.weight * q for p, q in self.lines.values())
