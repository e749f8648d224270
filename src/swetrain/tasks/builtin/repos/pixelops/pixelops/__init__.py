"""pixelops: colour conversions and simple raster operations on images stored as lists of rows."""
from .color import blend, contrast_ratio, hex_to_rgb, hsv_to_rgb, relative_luminance, rgb_to_hex, rgb_to_hsv
from .image import (
    box_blur, brightness, convolve, crop, flip_horizontal, flip_vertical, histogram, invert,
    resize_nearest, rotate90, size, threshold, to_grayscale,
)

__all__ = [
    "blend", "contrast_ratio", "hex_to_rgb", "hsv_to_rgb", "relative_luminance", "rgb_to_hex", "rgb_to_hsv",
    "box_blur", "brightness", "convolve", "crop", "flip_horizontal", "flip_vertical", "histogram", "invert",
    "resize_nearest", "rotate90", "size", "threshold", "to_grayscale",
]
