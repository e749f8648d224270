"""Money helpers; amounts are integer cents."""
from __future__ import annotations


def percent_of(cents: int, percent: float) -> int:
    """``percent`` % of ``cents``, rounded half up to a whole cent (for non-negative amounts)."""
    if cents < 0:
        raise ValueError(f"amount must be non-negative, got {cents}")
    scaled = round(cents * percent * 100)  # in 1/10000 of a cent
    whole, rest = divmod(scaled, 10000)
    return whole + (1 if rest >= 5000 else 0)


def format_cents(cents: int, symbol: str = "$") -> str:
    """``123456`` -> ``"$1,234.56"``; negatives are written ``-$1.00``."""
    sign = "-" if cents < 0 else ""
    units, frac = divmod(abs(cents), 100)
    return f"{sign}{symbol}{units:,}.{frac:02d}"


def parse_price(text: str) -> int:
    """Parse ``"12"``, ``"12.5"``, ``"$1,234.56"`` into cents; more than two decimals is an error."""
    cleaned = text.strip().lstrip("$").replace(",", "")
    if not cleaned:
        raise ValueError("empty price")
    whole, dot, frac = cleaned.partition(".")
    if not whole.isdigit() or (dot and not frac.isdigit()):
        raise ValueError(f"not a price: {text!r}")
    if len(frac) > 2:
        raise ValueError(f"too many decimals in {text!r}")
    return int(whole) * 100 + int(frac.ljust(2, "0") or 0)
