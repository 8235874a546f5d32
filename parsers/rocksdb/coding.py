"""RocksDB's primitive encodings: little-endian varint32/varint64, the zig-zag
signed varint, fixed32/64 and length-prefixed slices (util/coding.h)."""
from __future__ import annotations

import struct


class CodingError(Exception):
    """An encoded value ran past its buffer or was malformed; ``offset`` is where it began."""

    def __init__(self, message: str, offset: int):
        self.offset = offset
        super().__init__(message)


def varint(buf, pos: int, limit: int | None = None, max_bytes: int = 10) -> tuple[int, int]:
    """One unsigned LEB128 varint at ``pos`` (GetVarint32/64Ptr); returns (value, next pos)."""
    end = len(buf) if limit is None else limit
    if pos < end:
        b = buf[pos]
        if b < 0x80:                                  # one byte: most tags, lengths and levels
            return b, pos + 1
    result = 0
    shift = 0
    p = pos
    for _ in range(max_bytes):
        if p >= end:
            raise CodingError("varint runs past the end", pos)
        b = buf[p]
        p += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, p
        shift += 7
    raise CodingError(f"varint longer than {max_bytes} bytes", pos)


def varint32(buf, pos: int, limit: int | None = None) -> tuple[int, int]:
    """A varint32 (at most 5 bytes, value < 2**32)."""
    end = len(buf) if limit is None else limit
    if pos < end:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
    v, p = varint(buf, pos, end, 5)
    if v >= 1 << 32:
        raise CodingError("varint32 over 32 bits", pos)
    return v, p


def signed_varint(buf, pos: int, limit: int | None = None) -> tuple[int, int]:
    """GetVarsignedint64: zig-zag decoded (util/coding.h zigzagToI64)."""
    v, p = varint(buf, pos, limit)
    return (v >> 1) ^ -(v & 1), p


def slice_(buf, pos: int, limit: int | None = None) -> tuple[bytes, int]:
    """GetLengthPrefixedSlice: varint32 length, then the bytes."""
    end = len(buf) if limit is None else limit
    n, p = varint32(buf, pos, end)
    if p + n > end:
        raise CodingError(f"slice of {n} bytes runs past the end", pos)
    return bytes(buf[p:p + n]), p + n


def fixed32(buf, pos: int) -> int:
    if pos + 4 > len(buf):
        raise CodingError("fixed32 runs past the end", pos)
    return struct.unpack_from("<I", buf, pos)[0]


def fixed64(buf, pos: int) -> int:
    if pos + 8 > len(buf):
        raise CodingError("fixed64 runs past the end", pos)
    return struct.unpack_from("<Q", buf, pos)[0]


def encode_varint32(v: int) -> bytes:
    """PutVarint32."""
    return _put_varint(v)


def encode_varint64(v: int) -> bytes:
    """PutVarint64 (block handles: the same 7-bit groups, up to 10 bytes)."""
    return _put_varint(v)


def _put_varint(v: int) -> bytes:
    """util/coding.h EncodeVarint32/64: 7 bits a byte, low first, the high bit on all but the last."""
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)
