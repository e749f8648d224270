import pytest

from pixelops import blend, contrast_ratio, hex_to_rgb, hsv_to_rgb, relative_luminance, rgb_to_hex, rgb_to_hsv


def test_hex_to_rgb_long_and_short():
    assert hex_to_rgb("#ff8000") == (255, 128, 0)
    assert hex_to_rgb("F80") == (255, 136, 0)


def test_hex_to_rgb_invalid():
    for bad in ["#ff80", "#gg0000", "", "#1234567"]:
        with pytest.raises(ValueError):
            hex_to_rgb(bad)


def test_rgb_to_hex_padding():
    assert rgb_to_hex((0, 10, 255)) == "#000aff"


def test_rgb_to_hex_range():
    with pytest.raises(ValueError):
        rgb_to_hex((256, 0, 0))
    with pytest.raises(ValueError):
        rgb_to_hex((0, -1, 0))


def test_hex_roundtrip():
    assert rgb_to_hex(hex_to_rgb("#12ab9f")) == "#12ab9f"


def test_rgb_to_hsv_primaries():
    assert rgb_to_hsv((255, 0, 0)) == (0.0, 1.0, 1.0)
    assert rgb_to_hsv((0, 255, 0)) == (120.0, 1.0, 1.0)
    assert rgb_to_hsv((0, 0, 255)) == (240.0, 1.0, 1.0)


def test_rgb_to_hsv_magenta_wraps():
    h, s, v = rgb_to_hsv((255, 0, 128))
    assert 329 < h < 331


def test_rgb_to_hsv_gray_and_black():
    assert rgb_to_hsv((128, 128, 128)) == (0.0, 0.0, pytest.approx(128 / 255))
    assert rgb_to_hsv((0, 0, 0)) == (0.0, 0.0, 0.0)


def test_hsv_to_rgb_sectors():
    assert hsv_to_rgb(0, 1, 1) == (255, 0, 0)
    assert hsv_to_rgb(60, 1, 1) == (255, 255, 0)
    assert hsv_to_rgb(180, 1, 1) == (0, 255, 255)
    assert hsv_to_rgb(300, 1, 1) == (255, 0, 255)


def test_hsv_to_rgb_hue_wraps():
    assert hsv_to_rgb(360, 1, 1) == (255, 0, 0)
    assert hsv_to_rgb(-120, 1, 1) == (0, 0, 255)


def test_hsv_to_rgb_range():
    with pytest.raises(ValueError):
        hsv_to_rgb(0, 1.5, 1)


def test_hsv_roundtrip():
    for rgb in [(12, 200, 99), (250, 250, 1), (90, 30, 200)]:
        assert hsv_to_rgb(*rgb_to_hsv(rgb)) == rgb


def test_luminance_extremes():
    assert relative_luminance((0, 0, 0)) == 0
    assert relative_luminance((255, 255, 255)) == pytest.approx(1.0)


def test_luminance_dark_channel_linear_segment():
    assert relative_luminance((10, 10, 10)) == pytest.approx(10 / 255 / 12.92)


def test_contrast_black_white():
    assert contrast_ratio((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast_ratio((255, 255, 255), (0, 0, 0)) == pytest.approx(21.0)


def test_contrast_same_colour():
    assert contrast_ratio((50, 60, 70), (50, 60, 70)) == pytest.approx(1.0)


def test_blend():
    assert blend((255, 0, 0), (0, 0, 255), 0.5) == (128, 0, 128)
    assert blend((255, 0, 0), (0, 0, 255), 1) == (255, 0, 0)
    assert blend((255, 0, 0), (0, 0, 255), 0) == (0, 0, 255)


def test_blend_alpha_range():
    with pytest.raises(ValueError):
        blend((0, 0, 0), (0, 0, 0), 1.1)
