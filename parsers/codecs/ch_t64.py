"""ClickHouse T64 codec (method byte 0x93): payload after the 9-byte block header.

src/Compression/CompressionCodecT64.cpp: a cookie byte (type MagicNumber, plus
0x80 for the 'bit' variant), the ``size % sizeof(T)`` leading bytes verbatim,
then, when values remain, ``min`` and ``max`` as 8-byte little-endian (Int64 for
signed types, UInt64 otherwise), then for each run of 64 values (the last one
zero-padded) ``8 * num_bits`` bytes: in the default 'byte' variant the low
``num_bits // 8`` byte planes (64 bytes each: byte k of every value) followed
by ``num_bits % 8`` bit planes of the next byte as UInt64 masks (bit i = value
i); in the 'bit' variant all ``num_bits`` bit planes as masks.  ``num_bits``
comes from min and max (getValuableBitsNumber); the upper bits are restored
from min (or max, for signed data crossing zero).  Fully vectorised.
"""
from __future__ import annotations

import numpy as np

from .general import DecodeError

# enum class MagicNumber in CompressionCodecT64.cpp: fixed type ids
MAGIC_NUMBERS = {
    "UInt8": 1, "UInt16": 2, "UInt32": 3, "UInt64": 4,
    "Int8": 6, "Int16": 7, "Int32": 8, "Int64": 9,
    "Date": 13, "DateTime": 14, "DateTime64": 15, "Enum8": 17, "Enum16": 18,
    "Decimal32": 19, "Decimal64": 20, "IPv4": 21, "Date32": 22, "Time": 23, "Time64": 24,
}
TYPE_OF_MAGIC = {v: k for k, v in MAGIC_NUMBERS.items()}

# baseType() in CompressionCodecT64.cpp: the integer type each one is coded as
BASE_TYPE = {
    "Int8": "Int8", "Int16": "Int16",
    "Int32": "Int32", "Time": "Int32", "Decimal32": "Int32", "Date32": "Int32",
    "Int64": "Int64", "Decimal64": "Int64", "Time64": "Int64", "DateTime64": "Int64",
    "UInt8": "UInt8", "Enum8": "UInt8",
    "UInt16": "UInt16", "Enum16": "UInt16", "Date": "UInt16",
    "UInt32": "UInt32", "DateTime": "UInt32", "IPv4": "UInt32",
    "UInt64": "UInt64",
}

VARIANT_BYTE, VARIANT_BIT = 0, 1
MATRIX_SIZE = 64


def base_type_info(type_name: str) -> tuple[int, bool]:
    """(value width in bytes, signed) of the base type a T64 type is coded as."""
    base = BASE_TYPE[type_name]
    signed = not base.startswith("U")
    return int(base[3:] if signed else base[4:]) // 8, signed


def type_for(width: int, signed: bool = False) -> str:
    """The plain integer type name for a value width (the T64 default when only a size is known)."""
    return f"{'' if signed else 'U'}Int{8 * width}"


def valuable_bits(mn: int, mx: int, signed: bool) -> int:
    """getValuableBitsNumber(min, max)."""
    if signed and mn < 0 <= mx:
        if mn + mx >= 0:
            return mx.bit_length() + 1
        return (~mn).bit_length() + 1
    return ((mn & 0xFFFFFFFFFFFFFFFF) ^ (mx & 0xFFFFFFFFFFFFFFFF)).bit_length()


def encode(raw: bytes, type_name: str, variant: int = VARIANT_BYTE) -> bytes:
    """T64-encode ``raw`` as values of the ClickHouse type ``type_name`` (doCompressData)."""
    if type_name not in MAGIC_NUMBERS:
        raise ValueError(f"T64 does not support type {type_name}")
    width, signed = base_type_info(type_name)
    cookie = MAGIC_NUMBERS[type_name] | (variant << 7)
    raw = bytes(raw)
    skip = len(raw) % width
    out = [bytes((cookie,)), raw[:skip]]
    body = raw[skip:]
    if not body:
        return b"".join(out)
    dt = np.dtype(f"<{'i' if signed else 'u'}{width}")
    vals = np.frombuffer(body, dtype=dt)
    mn, mx = int(vals.min()), int(vals.max())
    out.append(np.array([mn, mx], dtype="<i8" if signed else "<u8").tobytes())
    nb = valuable_bits(mn, mx, signed)
    if nb == 0:
        return b"".join(out)
    u = vals.view(f"<u{width}").astype(np.uint64)
    blocks = -(-len(u) // MATRIX_SIZE)
    m = np.zeros(blocks * MATRIX_SIZE, dtype=np.uint64)
    m[:len(u)] = u
    m = m.reshape(blocks, MATRIX_SIZE)
    full_bytes, part_bits = (nb // 8, nb % 8) if variant == VARIANT_BYTE else (0, nb)
    parts = []
    # byte k of every value: the little-endian words' bytes, transposed (blocks, 8, 64)
    planes = m.astype("<u8", copy=False).view(np.uint8).reshape(blocks, MATRIX_SIZE, 8).transpose(0, 2, 1)
    if full_bytes:
        parts.append(planes[:, :full_bytes, :].reshape(blocks, full_bytes * MATRIX_SIZE))
    if part_bits:
        # bits 8 * full_bytes ... of every value (the byte planes that hold them unpacked), each
        # plane a UInt64 mask (bit i = value i)
        b1 = -(-(8 * full_bytes + part_bits) // 8)
        bitp = np.unpackbits(planes[:, full_bytes:b1, :], axis=1, count=part_bits,
                             bitorder="little")                          # (blocks, part_bits, 64)
        masks = np.packbits(bitp, axis=-1, bitorder="little")            # (blocks, part_bits, 8)
        parts.append(masks.reshape(blocks, part_bits * 8))
    out.append(np.concatenate(parts, axis=1).tobytes() if len(parts) > 1 else parts[0].tobytes())
    return b"".join(out)


def cookie_of(payload: bytes) -> tuple[str, int]:
    """(type name, variant) from a T64 payload's first byte."""
    if not payload:
        raise DecodeError("T64: empty payload")
    magic = payload[0] & 0x7F
    if magic not in TYPE_OF_MAGIC:
        raise DecodeError(f"T64: bad type magic number {magic}")
    return TYPE_OF_MAGIC[magic], payload[0] >> 7


def decode(payload: bytes, uncompressed_size: int) -> bytes:
    """Undo T64 on one block payload (doDecompressData); exact size or DecodeError."""
    type_name, variant = cookie_of(payload)
    width, signed = base_type_info(type_name)
    skip = uncompressed_size % width
    src = memoryview(payload)[1:]
    if len(src) < skip:
        raise DecodeError("T64: payload shorter than its skipped bytes")
    head = bytes(src[:skip])
    src = src[skip:]
    n = (uncompressed_size - skip) // width
    if n == 0:
        return head
    if len(src) < 16:
        raise DecodeError("T64: payload shorter than its min/max header")
    mdt = "<i8" if signed else "<u8"
    mn, mx = (int(v) for v in np.frombuffer(src, dtype=mdt, count=2))
    src = src[16:]
    dt = np.dtype(f"<{'i' if signed else 'u'}{width}")
    nb = valuable_bits(mn, mx, signed)
    if nb == 0:
        return head + np.full(n, mn & ((1 << (8 * width)) - 1), dtype=f"<u{width}").tobytes()
    if nb > 8 * width:
        raise DecodeError(f"T64: {nb} valuable bits for a {width}-byte type")
    per_block = 8 * nb
    if len(src) == 0 or len(src) % per_block:
        raise DecodeError(f"T64: data size {len(src)} is not a multiple of {per_block}")
    blocks = len(src) // per_block
    if blocks != -(-n // MATRIX_SIZE):
        raise DecodeError(f"T64: {blocks} blocks of 64 values for {n} values")
    data = np.frombuffer(src, dtype=np.uint8).reshape(blocks, per_block)
    full_bytes, part_bits = (nb // 8, nb % 8) if variant == VARIANT_BYTE else (0, nb)
    vals = np.zeros((blocks, MATRIX_SIZE), dtype=np.uint64)
    if full_bytes:
        planes = data[:, :full_bytes * MATRIX_SIZE].reshape(blocks, full_bytes, MATRIX_SIZE)
        for k in range(full_bytes):
            vals |= planes[:, k, :].astype(np.uint64) << np.uint64(8 * k)
    if part_bits:
        masks = data[:, full_bytes * MATRIX_SIZE:].reshape(blocks, part_bits, 8)
        bitp = np.unpackbits(masks, axis=-1, bitorder="little")         # (blocks, part_bits, 64)
        base_bit = 8 * full_bytes
        for j in range(part_bits):
            vals |= bitp[:, j, :].astype(np.uint64) << np.uint64(base_bit + j)
    vals = vals.ravel()[:n]
    # restoreUpperBits()
    if nb < 64:
        upper_min = np.uint64(((mn & 0xFFFFFFFFFFFFFFFF) >> nb) << nb)
        if signed and mn < 0 <= mx:
            upper_max = np.uint64(((mx & 0xFFFFFFFFFFFFFFFF) >> nb) << nb)
            neg = (vals >> np.uint64(nb - 1)) & np.uint64(1)
            vals = vals | np.where(neg == 1, upper_min, upper_max)
        else:
            vals = vals | upper_min
    return head + vals.astype(f"<u{width}").tobytes()
