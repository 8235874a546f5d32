"""ClickHouse GCD codec (method byte 0x9a): payload after the 9-byte block header.

src/Compression/CompressionCodecGCD.cpp: ``[width][bytes_to_skip]``, the
skipped leading bytes verbatim, the greatest common divisor of all values
(width bytes, little-endian), then every value divided by it.  Widths 1-8 are
handled with numpy; 16 and 32 (UInt128/UInt256, Decimal128/256) with Python ints.
"""
from __future__ import annotations

import math

import numpy as np

from .general import DecodeError

GCD_WIDTHS = (1, 2, 4, 8, 16, 32)


def _big_values(body: bytes, width: int) -> list[int]:
    return [int.from_bytes(body[i:i + width], "little") for i in range(0, len(body), width)]


def encode(raw: bytes, width: int) -> bytes:
    """GCD-encode ``raw`` as unsigned values of ``width`` bytes (doCompressData).

    All-zero input stores a divisor of 0 and zero quotients (the engine's
    behaviour there, a division by zero in libdivide, is not reproduced).
    """
    if width not in GCD_WIDTHS:
        raise ValueError(f"GCD width must be one of {GCD_WIDTHS}, not {width}")
    raw = bytes(raw)
    skip = len(raw) % width
    head = bytes((width, skip)) + raw[:skip]
    body = raw[skip:]
    if width <= 8:
        vals = np.frombuffer(body, dtype=np.dtype(f"<u{width}"))
        g = np.gcd.reduce(vals.astype(np.uint64)) if len(vals) else np.uint64(0)
        g = int(g)
        q = vals // vals.dtype.type(g) if g else np.zeros_like(vals)
        return head + g.to_bytes(width, "little") + q.astype(vals.dtype).tobytes()
    vals = _big_values(body, width)
    g = 0
    for v in vals:
        g = math.gcd(g, v)
        if g == 1:
            break
    q = b"".join((v // g if g else 0).to_bytes(width, "little") for v in vals)
    return head + g.to_bytes(width, "little") + q


def decode(payload: bytes, uncompressed_size: int) -> bytes:
    """Undo GCD on one block payload (doDecompressData); exact output size or DecodeError."""
    if len(payload) < 2:
        raise DecodeError("GCD: payload shorter than its 2-byte header")
    if uncompressed_size == 0:
        return b""
    width = payload[0]
    if width not in GCD_WIDTHS:
        raise DecodeError(f"GCD: bad value width {width}")
    skip = uncompressed_size % width
    if 2 + skip > len(payload):
        raise DecodeError("GCD: payload shorter than its skipped bytes")
    body = bytes(payload[2 + skip:])
    if len(body) % width or len(body) < width:
        raise DecodeError(f"GCD: data size {len(body)} is not a positive multiple of {width}")
    if skip + len(body) - width != uncompressed_size:
        raise DecodeError(f"GCD: payload holds {skip + len(body) - width} bytes, header says {uncompressed_size}")
    g = int.from_bytes(body[:width], "little")
    if width <= 8:
        dt = np.dtype(f"<u{width}")
        q = np.frombuffer(body, dtype=dt, offset=width)
        vals = (q * dt.type(g)).astype(dt)          # wraps like the engine's T multiply
        return bytes(payload[2:2 + skip]) + vals.tobytes()
    mask = (1 << (8 * width)) - 1
    vals = _big_values(body[width:], width)
    return bytes(payload[2:2 + skip]) + b"".join(((v * g) & mask).to_bytes(width, "little") for v in vals)
