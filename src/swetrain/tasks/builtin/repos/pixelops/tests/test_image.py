import pytest

from pixelops import (
    box_blur, brightness, convolve, crop, flip_horizontal, flip_vertical, histogram, invert,
    resize_nearest, rotate90, size, threshold, to_grayscale,
)

IMG = [[1, 2, 3], [4, 5, 6]]


def test_size():
    assert size(IMG) == (3, 2)


def test_size_empty_and_ragged():
    with pytest.raises(ValueError):
        size([])
    with pytest.raises(ValueError):
        size([[1, 2], [3]])


def test_grayscale():
    assert to_grayscale([[(255, 255, 255), (255, 0, 0), (0, 0, 0)]]) == [[255, 76, 0]]


def test_invert_gray_and_rgb():
    assert invert([[0, 200]]) == [[255, 55]]
    assert invert([[(0, 100, 255)]]) == [[(255, 155, 0)]]


def test_threshold_inclusive():
    assert threshold([[99, 100, 101]], 100) == [[0, 255, 255]]


def test_brightness_clamps():
    assert brightness([[10, 250]], 10) == [[20, 255]]
    assert brightness([[5, 100]], -10) == [[0, 90]]


def test_flips():
    assert flip_horizontal(IMG) == [[3, 2, 1], [6, 5, 4]]
    assert flip_vertical(IMG) == [[4, 5, 6], [1, 2, 3]]


def test_rotate_clockwise():
    assert rotate90(IMG) == [[4, 1], [5, 2], [6, 3]]


def test_rotate_counter_clockwise():
    assert rotate90(IMG, clockwise=False) == [[3, 6], [2, 5], [1, 4]]


def test_rotate_four_times_identity():
    out = IMG
    for _ in range(4):
        out = rotate90(out)
    assert out == IMG


def test_crop():
    assert crop(IMG, 1, 0, 2, 2) == [[2, 3], [5, 6]]


def test_crop_full_image_allowed():
    assert crop(IMG, 0, 0, 3, 2) == IMG


def test_crop_outside():
    with pytest.raises(ValueError, match="outside"):
        crop(IMG, 2, 0, 2, 1)
    with pytest.raises(ValueError, match="outside"):
        crop(IMG, 0, 1, 1, 2)
    with pytest.raises(ValueError):
        crop(IMG, -1, 0, 1, 1)


def test_crop_nonpositive_size():
    with pytest.raises(ValueError, match="positive"):
        crop(IMG, 0, 0, 0, 1)


def test_resize_upscale():
    assert resize_nearest([[1, 2]], 4, 2) == [[1, 1, 2, 2], [1, 1, 2, 2]]


def test_resize_downscale():
    assert resize_nearest([[1, 2, 3, 4], [5, 6, 7, 8]], 2, 1) == [[1, 3]]


def test_resize_bad_size():
    with pytest.raises(ValueError):
        resize_nearest(IMG, 0, 1)


def test_convolve_identity():
    assert convolve(IMG, [[0, 0, 0], [0, 1, 0], [0, 0, 0]]) == IMG


def test_convolve_edge_clamp_shift():
    # kernel picks the left neighbour; at x=0 the edge clamps to itself
    assert convolve(IMG, [[0, 0, 0], [1, 0, 0], [0, 0, 0]]) == [[1, 1, 2], [4, 4, 5]]


def test_convolve_clamps_output():
    assert convolve([[200]], [[2]]) == [[255]]
    assert convolve([[200]], [[-1]]) == [[0]]


def test_convolve_bad_kernel():
    with pytest.raises(ValueError):
        convolve(IMG, [[1, 1], [1, 1]])
    with pytest.raises(ValueError):
        convolve(IMG, [[1]], divisor=0)


def test_box_blur_constant_unchanged():
    img = [[7] * 4 for _ in range(3)]
    assert box_blur(img) == img


def test_box_blur_spike():
    img = [[0, 0, 0], [0, 90, 0], [0, 0, 0]]
    assert box_blur(img)[1][1] == 10 and box_blur(img)[0][0] == 10


def test_box_blur_radius_zero_and_negative():
    assert box_blur(IMG, 0) == IMG
    with pytest.raises(ValueError):
        box_blur(IMG, -1)


def test_histogram():
    h = histogram([[0, 255, 255], [3, 3, 3]])
    assert len(h) == 256 and h[0] == 1 and h[255] == 2 and h[3] == 3


def test_histogram_out_of_range():
    with pytest.raises(ValueError):
        histogram([[256]])
