"""Unit conversions and ADC scaling."""
from __future__ import annotations

ABS_ZERO_C = -273.15


def celsius_to_fahrenheit(c: float) -> float:
    return c * 9 / 5 + 32


def convert_temperature(value: float, src: str, dst: str) -> float:
    """Convert between ``C``, ``F`` and ``K``; values below absolute zero raise ``ValueError``."""
    src, dst = src.upper(), dst.upper()
    if src == "C":
        c = value
    elif src == "F":
        c = (value - 32) * 5 / 9
    elif src == "K":
        c = value + ABS_ZERO_C
    else:
        raise ValueError(f"unknown unit {src!r}")
    if c < ABS_ZERO_C:
        raise ValueError(f"{value}{src} is below absolute zero")
    if dst == "C":
        return c
    if dst == "F":
        return celsius_to_fahrenheit(c)
    if dst == "K":
        return c - ABS_ZERO_C
    raise ValueError(f"unknown unit {dst!r}")


def adc_to_voltage(raw: int, bits: int = 12, vref: float = 3.3) -> float:
    """Scale a raw reading ``0 .. 2**bits - 1`` to volts: ``raw * vref / (2**bits - 1)``."""
    top = (1 << bits) - 1
    if raw < 0 or raw > top:
        raise ValueError(f"raw value {raw} outside 0..{top}")
    return raw * vref / top


def voltage_to_adc(volts: float, bits: int = 12, vref: float = 3.3) -> int:
    """Inverse of ``adc_to_voltage`` rounded to the nearest count and clamped to the ADC range."""
    top = (1 << bits) - 1
    raw = int(round(volts * top / vref))
    return max(0, min(top, raw))


def divider_input(v_out: float, r_top: float, r_bottom: float) -> float:
    """Input voltage of a resistor divider from its output: ``v_out * (r_top + r_bottom) / r_bottom``."""
    if r_bottom <= 0 or r_top < 0:
        raise ValueError("resistances must be positive")
    return v_out * (r_top + r_bottom) / r_bottom
