import pytest

from sensorbuf import FrameError, crc8, decode_frame, encode_frame


def test_crc8_check_value():
    assert crc8(b"123456789") == 0xF4


def test_crc8_empty_and_single():
    assert crc8(b"") == 0
    assert crc8(b"\x01") == 0x07


def test_encode_layout():
    frame = encode_frame(7, [1, -1])
    assert frame[0] == 0xAA and frame[1] == 5 and frame[2] == 7
    assert frame[3:7] == b"\x01\x00\xff\xff"
    assert frame[-1] == crc8(frame[1:-1])


def test_roundtrip():
    assert decode_frame(encode_frame(200, [0, 32767, -32768, 123])) == (200, [0, 32767, -32768, 123])


def test_roundtrip_no_readings():
    assert decode_frame(encode_frame(1, [])) == (1, [])


def test_encode_limits():
    with pytest.raises(ValueError):
        encode_frame(256, [])
    with pytest.raises(ValueError):
        encode_frame(1, [32768])
    with pytest.raises(ValueError):
        encode_frame(1, [0] * 128)


def test_decode_short():
    with pytest.raises(FrameError, match="short"):
        decode_frame(b"\xaa\x01\x00")


def test_decode_bad_start():
    frame = bytearray(encode_frame(1, [5]))
    frame[0] = 0x55
    with pytest.raises(FrameError, match="start"):
        decode_frame(bytes(frame))


def test_decode_length_mismatch():
    with pytest.raises(FrameError, match="length"):
        decode_frame(encode_frame(1, [5])[:-2] + b"\x00")


def test_decode_corrupted_payload():
    frame = bytearray(encode_frame(1, [5, 6]))
    frame[4] ^= 0x10
    with pytest.raises(FrameError, match="checksum"):
        decode_frame(bytes(frame))


def test_decode_odd_reading_bytes():
    body = bytes([2, 9, 1])
    with pytest.raises(FrameError, match="odd"):
        decode_frame(b"\xaa" + body + bytes([crc8(body)]))
