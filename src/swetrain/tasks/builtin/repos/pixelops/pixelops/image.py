"""Raster operations. An image is a non-empty list of equal-length rows of pixels.

Grayscale pixels are ints 0..255; colour pixels are ``(r, g, b)`` tuples.
"""
from __future__ import annotations

from typing import Any

Image = list[list[Any]]


def size(img: Image) -> tuple[int, int]:
    """``(width, height)``; raises ``ValueError`` for empty or ragged images."""
    if not img or not img[0]:
        raise ValueError("image is empty")
    width = len(img[0])
    if any(len(row) != width for row in img):
        raise ValueError("image rows differ in length")
    return width, len(img)


def to_grayscale(img: Image) -> Image:
    """Luma ``0.299 R + 0.587 G + 0.114 B`` rounded to the nearest int."""
    size(img)
    return [[int(round(0.299 * r + 0.587 * g + 0.114 * b)) for (r, g, b) in row] for row in img]


def invert(img: Image) -> Image:
    """``255 - v`` for grayscale, per channel for colour."""
    size(img)
    return [[tuple(255 - c for c in p) if isinstance(p, tuple) else 255 - p for p in row] for row in img]


def threshold(img: Image, level: int) -> Image:
    """Grayscale to black/white: pixels ``>= level`` become 255, others 0."""
    size(img)
    return [[255 if p >= level else 0 for p in row] for row in img]


def brightness(img: Image, delta: int) -> Image:
    """Add ``delta`` to every grayscale pixel, clamping to 0..255."""
    size(img)
    return [[max(0, min(255, p + delta)) for p in row] for row in img]


def flip_horizontal(img: Image) -> Image:
    """Mirror left-right."""
    size(img)
    return [list(reversed(row)) for row in img]


def flip_vertical(img: Image) -> Image:
    """Mirror top-bottom."""
    size(img)
    return [list(row) for row in reversed(img)]


def rotate90(img: Image, clockwise: bool = True) -> Image:
    """Rotate by 90 degrees; a ``w x h`` image becomes ``h x w``."""
    w, h = size(img)
    if clockwise:
        return [[img[h - 1 - y][x] for y in range(h)] for x in range(w)]
    return [[img[y][w - 1 - x] for y in range(h)] for x in range(w)]


def crop(img: Image, x: int, y: int, w: int, h: int) -> Image:
    """The ``w x h`` region whose top-left corner is ``(x, y)``; it must lie fully inside the image."""
    width, height = size(img)
    if w <= 0 or h <= 0:
        raise ValueError("crop size must be positive")
    if x < 0 or y < 0 or x + w > width or y + h > height:
        raise ValueError(f"crop {w}x{h}+{x}+{y} outside {width}x{height} image")
    return [row[x:x + w] for row in img[y:y + h]]


def resize_nearest(img: Image, new_w: int, new_h: int) -> Image:
    """Nearest-neighbour resize: target pixel ``(i, j)`` samples source ``(i * w // new_w, j * h // new_h)``."""
    w, h = size(img)
    if new_w <= 0 or new_h <= 0:
        raise ValueError("target size must be positive")
    return [[img[j * h // new_h][i * w // new_w] for i in range(new_w)] for j in range(new_h)]


def convolve(img: Image, kernel: list[list[float]], divisor: float = 1.0) -> Image:
    """Grayscale convolution with an odd-sized square kernel; edges clamp, results round and clamp to 0..255."""
    w, h = size(img)
    k = len(kernel)
    if k % 2 == 0 or any(len(row) != k for row in kernel):
        raise ValueError("kernel must be square with odd size")
    if divisor == 0:
        raise ValueError("divisor must not be zero")
    r = k // 2
    out: Image = []
    for y in range(h):
        row = []
        for x in range(w):
            acc = 0.0
            for ky in range(k):
                sy = min(max(y + ky - r, 0), h - 1)
                for kx in range(k):
                    sx = min(max(x + kx - r, 0), w - 1)
                    acc += kernel[ky][kx] * img[sy][sx]
            row.append(max(0, min(255, int(round(acc / divisor)))))
        out.append(row)
    return out


def box_blur(img: Image, radius: int = 1) -> Image:
    """Mean over a ``(2r+1)^2`` window with clamped edges; radius 0 returns a copy."""
    if radius < 0:
        raise ValueError("radius must be non-negative")
    k = 2 * radius + 1
    return convolve(img, [[1.0] * k for _ in range(k)], divisor=k * k)


def histogram(img: Image) -> list[int]:
    """256 counts of grayscale values."""
    size(img)
    counts = [0] * 256
    for row in img:
        for p in row:
            if p < 0 or p > 255:
                raise ValueError(f"pixel out of range: {p}")
            counts[p] += 1
    return counts
