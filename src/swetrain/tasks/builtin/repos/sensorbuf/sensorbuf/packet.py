"""Framed sensor packets: ``0xAA, length, payload..., crc8(length + payload)``."""
from __future__ import annotations

import struct

START = 0xAA


class FrameError(ValueError):
    """A frame that is truncated, badly started or has a wrong checksum."""


def crc8(data: bytes, poly: int = 0x07, init: int = 0x00) -> int:
    """CRC-8 (MSB first, no reflection, no final xor); ``crc8(b"123456789") == 0xF4``."""
    crc = init
    for byte in data:
        crc ^= byte
        for _ in range(8):
            if crc & 0x80:
                crc = ((crc << 1) ^ poly) & 0xFF
            else:
                crc = (crc << 1) & 0xFF
    return crc


def encode_frame(sensor_id: int, readings: list[int]) -> bytes:
    """Payload = sensor id (1 byte) + little-endian signed 16-bit readings."""
    if not 0 <= sensor_id <= 255:
        raise ValueError("sensor_id must fit in one byte")
    for r in readings:
        if r < -32768 or r > 32767:
            raise ValueError(f"reading {r} does not fit in int16")
    payload = bytes([sensor_id]) + struct.pack(f"<{len(readings)}h", *readings)
    if len(payload) > 255:
        raise ValueError("payload too long")
    body = bytes([len(payload)]) + payload
    return bytes([START]) + body + bytes([crc8(body)])


def decode_frame(frame: bytes) -> tuple[int, list[int]]:
    """Inverse of ``encode_frame``: return ``(sensor_id, readings)``; raise ``FrameError`` if invalid."""
    if len(frame) < 4:
        raise FrameError("frame too short")
    if frame[0] != START:
        raise FrameError(f"bad start byte 0x{frame[0]:02x}")
    length = frame[1]
    if len(frame) != length + 3:
        raise FrameError(f"length byte says {length} but frame holds {len(frame) - 3}")
    body = frame[1:-1]
    if crc8(body) != frame[-1]:
        raise FrameError("checksum mismatch")
    payload = body[1:]
    if (len(payload) - 1) % 2 != 0:
        raise FrameError("odd number of reading bytes")
    count = (len(payload) - 1) // 2
    return payload[0], list(struct.unpack(f"<{count}h", payload[1:]))
