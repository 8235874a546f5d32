"""ClickHouse Delta codec (method byte 0x92): payload after the 9-byte block header.

src/Compression/CompressionCodecDelta.cpp: ``[width][bytes_to_skip]``, the
``bytes_to_skip = size % width`` leading bytes verbatim, then each value minus
the previous one (the first minus 0), wrapping, as width-byte little-endian ints.
"""
from __future__ import annotations

import numpy as np

from .general import DecodeError

#: widths the engine accepts (Delta(1|2|4|8))
DELTA_WIDTHS = (1, 2, 4, 8)


def _udtype(width: int) -> np.dtype:
    return np.dtype(f"<u{width}")


def encode(raw: bytes, width: int) -> bytes:
    """Delta-encode ``raw`` as values of ``width`` bytes (doCompressData)."""
    if width not in DELTA_WIDTHS:
        raise ValueError(f"Delta width must be 1, 2, 4 or 8, not {width}")
    raw = bytes(raw)
    skip = len(raw) % width
    vals = np.frombuffer(raw, dtype=_udtype(width), offset=skip)
    out = np.empty_like(vals)
    if len(vals):
        out[0] = vals[0]
        np.subtract(vals[1:], vals[:-1], out=out[1:])
    return bytes((width, skip)) + raw[:skip] + out.tobytes()


def decode(payload: bytes, uncompressed_size: int) -> bytes:
    """Undo Delta on one block payload (doDecompressData); exact output size or DecodeError."""
    if len(payload) < 2:
        raise DecodeError("Delta: payload shorter than its 2-byte header")
    width = payload[0]
    if width not in DELTA_WIDTHS:
        raise DecodeError(f"Delta: bad value width {width}")
    skip = uncompressed_size % width
    if 2 + skip > len(payload):
        raise DecodeError("Delta: payload shorter than its skipped bytes")
    body = memoryview(payload)[2 + skip:]
    if len(body) % width:
        raise DecodeError(f"Delta: data size {len(body)} is not a multiple of {width}")
    if skip + len(body) != uncompressed_size:
        raise DecodeError(f"Delta: payload holds {skip + len(body)} bytes, header says {uncompressed_size}")
    deltas = np.frombuffer(body, dtype=_udtype(width))
    vals = np.cumsum(deltas, dtype=_udtype(width))
    return bytes(payload[2:2 + skip]) + vals.tobytes()
