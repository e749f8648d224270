"""Colour conversions: hex, RGB, HSV, luminance, contrast and alpha blending."""
from __future__ import annotations

RGB = tuple[int, int, int]


def _clamp8(v: float) -> int:
    return max(0, min(255, int(round(v))))


def hex_to_rgb(text: str) -> RGB:
    """``"#ff8000"``, ``"ff8000"`` or the short form ``"#f80"`` -> ``(255, 128, 0)``."""
    s = text.strip().lstrip("#")
    if len(s) == 3:
        s = "".join(ch * 2 for ch in s)
    if len(s) != 6 or any(ch not in "0123456789abcdefABCDEF" for ch in s):
        raise ValueError(f"not a hex colour: {text!r}")
    return int(s[0:2], 16), int(s[2:4], 16), int(s[4:6], 16)


def rgb_to_hex(rgb: RGB) -> str:
    """``(255, 128, 0)`` -> ``"#ff8000"``; each channel must be 0..255."""
    for ch in rgb:
        if ch < 0 or ch > 255:
            raise ValueError(f"channel out of range: {ch}")
    return "#" + "".join(f"{ch:02x}" for ch in rgb)


def rgb_to_hsv(rgb: RGB) -> tuple[float, float, float]:
    """Hue in degrees [0, 360), saturation and value in [0, 1]."""
    r, g, b = (c / 255 for c in rgb)
    hi, lo = max(r, g, b), min(r, g, b)
    delta = hi - lo
    if delta == 0:
        h = 0.0
    elif hi == r:
        h = 60 * (((g - b) / delta) % 6)
    elif hi == g:
        h = 60 * ((b - r) / delta + 2)
    else:
        h = 60 * ((r - g) / delta + 4)
    s = 0.0 if hi == 0 else delta / hi
    return h % 360, s, hi


def hsv_to_rgb(h: float, s: float, v: float) -> RGB:
    """Inverse of ``rgb_to_hsv`` (channels rounded to integers)."""
    if not (0 <= s <= 1 and 0 <= v <= 1):
        raise ValueError("saturation and value must be within [0, 1]")
    h = h % 360
    c = v * s
    x = c * (1 - abs((h / 60) % 2 - 1))
    m = v - c
    sector = int(h // 60)
    r, g, b = [(c, x, 0), (x, c, 0), (0, c, x), (0, x, c), (x, 0, c), (c, 0, x)][sector]
    return _clamp8((r + m) * 255), _clamp8((g + m) * 255), _clamp8((b + m) * 255)


def _linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def relative_luminance(rgb: RGB) -> float:
    """WCAG relative luminance of an sRGB colour, 0 (black) .. 1 (white)."""
    r, g, b = (_linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: RGB, b: RGB) -> float:
    """WCAG contrast ratio ``(L1 + 0.05) / (L2 + 0.05)`` with L1 the lighter colour; 1..21."""
    la, lb = relative_luminance(a), relative_luminance(b)
    lighter, darker = max(la, lb), min(la, lb)
    return (lighter + 0.05) / (darker + 0.05)


def blend(fg: RGB, bg: RGB, alpha: float) -> RGB:
    """Composite ``fg`` over ``bg`` with opacity ``alpha`` in [0, 1]."""
    if alpha < 0 or alpha > 1:
        raise ValueError(f"alpha must be within [0, 1], got {alpha}")
    return tuple(_clamp8(f * alpha + b * (1 - alpha)) for f, b in zip(fg, bg))  # type: ignore[return-value]
