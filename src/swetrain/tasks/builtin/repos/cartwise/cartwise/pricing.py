"""Discounts, coupons, tax and shipping; ``checkout`` combines them into totals."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from .cart import Cart
from .money import percent_of


@dataclass
class PercentOff:
    """``percent`` off the merchandise subtotal (optionally one category) when it reaches ``min_subtotal``."""

    percent: float
    min_subtotal: int = 0
    category: str | None = None

    def amount(self, cart: Cart) -> int:
        base = sum(p.price * q for p, q in cart.lines.values() if self.category is None or p.category == self.category)
        if cart.subtotal() < self.min_subtotal:
            return 0
        return percent_of(base, self.percent)


@dataclass
class FixedOff:
    """A fixed number of cents off, when the subtotal reaches ``min_subtotal``; never more than the subtotal."""

    cents: int
    min_subtotal: int = 0

    def amount(self, cart: Cart) -> int:
        sub = cart.subtotal()
        if sub < self.min_subtotal:
            return 0
        return min(self.cents, sub)


@dataclass
class BuyXGetY:
    """For every ``buy + free`` units of ``sku``, ``free`` units are free."""

    sku: str
    buy: int
    free: int

    def amount(self, cart: Cart) -> int:
        if self.sku not in cart.lines:
            return 0
        product, qty = cart.lines[self.sku]
        groups = qty // (self.buy + self.free)
        return groups * self.free * product.price


@dataclass
class Coupon:
    """A code wrapping a discount, valid from ``start`` to ``end`` inclusive, at most ``max_uses`` times."""

    code: str
    discount: PercentOff | FixedOff | BuyXGetY
    start: date | None = None
    end: date | None = None
    max_uses: int | None = None
    uses: int = 0

    def check(self, today: date) -> None:
        """Raise ``ValueError`` saying why the coupon cannot be used ``today``."""
        if self.start is not None and today < self.start:
            raise ValueError(f"coupon {self.code} is not active yet")
        if self.end is not None and today > self.end:
            raise ValueError(f"coupon {self.code} has expired")
        if self.max_uses is not None and self.uses >= self.max_uses:
            raise ValueError(f"coupon {self.code} has been used up")


def shipping_cost(subtotal: int, weight: int, free_over: int = 5000, base: int = 499, per_kg: int = 150) -> int:
    """Free when the (discounted) subtotal is at least ``free_over``; else ``base`` plus ``per_kg``
    for every started kilogram above the first."""
    if subtotal >= free_over:
        return 0
    extra_kg = 0
    if weight > 1000:
        extra_kg = (weight - 1000 + 999) // 1000
    return base + extra_kg * per_kg


def checkout(cart: Cart, discounts: list = (), coupons: list[Coupon] = (), tax_rate: float = 0.0,
             today: date | None = None, **shipping: int) -> dict[str, int]:
    """Totals in cents: ``subtotal``, ``discount``, ``tax``, ``shipping``, ``total``.

    All discounts and valid coupons add up but never exceed the subtotal. Tax applies to the
    taxable share of the discounted subtotal (discount spread proportionally). Using a coupon
    increments its ``uses``. An empty cart raises ``ValueError``.
    """
    if not cart.lines:
        raise ValueError("cannot check out an empty cart")
    subtotal = cart.subtotal()
    discount = sum(d.amount(cart) for d in discounts)
    for coupon in coupons:
        coupon.check(today or date.today())
        discount += coupon.discount.amount(cart)
    discount = min(discount, subtotal)
    taxable = sum(p.price * q for p, q in cart.lines.values() if p.taxable)
    if subtotal > 0:
        taxable_after = taxable - (discount * taxable) // subtotal
    else:
        taxable_after = 0
    tax = percent_of(taxable_after, tax_rate)
    ship = shipping_cost(subtotal - discount, cart.weight(), **shipping)
    for coupon in coupons:
        coupon.uses += 1
    return {
        "subtotal": subtotal,
        "discount": discount,
        "tax": tax,
        "shipping": ship,
        "total": subtotal - discount + tax + ship,
    }
