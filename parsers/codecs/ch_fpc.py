"""ClickHouse FPC codec (method byte 0x98): payload after the 9-byte block header.

src/Compression/CompressionCodecFPC.cpp (Burtscher & Ratanaworabhan's FPC):
``[float_width][level]``, then per pair of values one header byte (high nibble
for the first value, low for the second: bit 3 = DFCM predictor else FCM,
bits 0-2 = encoded count of leading zero bytes) followed by the low
``width - zero_bytes`` bytes of each value XOR its prediction.  The input is
zero-padded to an even number of values.  Predictor tables hold 2^level
entries; hashes: FCM ``(h << 6) ^ (v >> 48)`` (64-bit) / ``(h << 1) ^ (v >> 22)``
(32-bit), DFCM ``(h << 2) ^ (d >> 40)`` / ``(h << 4) ^ (d >> 23)``.  For 8-byte
values a zero-byte count of 4 is stored as 3 (encodeCompressedZeroByteCount).

Encoding is vectorised (the hash sequences depend only on the values, and a
table read is the value last written at the same hash); decoding is
inherently sequential and runs as a tight Python loop.
"""
from __future__ import annotations

import numpy as np

from .ch_bits import bit_length
from .general import DecodeError

FPC_WIDTHS = (4, 8)
#: CompressionCodecFPC::MAX_COMPRESSION_LEVEL / DEFAULT_COMPRESSION_LEVEL
MAX_COMPRESSION_LEVEL = 28
DEFAULT_COMPRESSION_LEVEL = 12
#: FPCOperation::MAX_ZERO_BYTE_COUNT, DFCM_BIT
MAX_ZERO_BYTE_COUNT = 0b111
DFCM_BIT = 0b1000

# (fcm shift, fcm value shift, dfcm shift, dfcm value shift) per width
_HASH = {8: (6, 48, 2, 40), 4: (1, 22, 4, 23)}


def _values(raw: bytes, width: int) -> np.ndarray:
    n = -(-len(raw) // width)
    n += n % 2
    buf = np.zeros(n * width, dtype=np.uint8)
    buf[:len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    return buf.view(f"<u{width}").astype(np.uint64)


def _hash_seq(x: np.ndarray, shift: int, vshift: int, level: int) -> np.ndarray:
    """h[0] = 0, h[i+1] = ((h[i] << shift) ^ (x[i] >> vshift)) & mask, vectorised."""
    mask = (1 << level) - 1
    t = (x >> np.uint64(vshift)).astype(np.uint64)
    h = np.zeros(len(x) + 1, dtype=np.uint64)
    j = 0
    while shift * j < level and j < len(t):
        h[1 + j:] ^= t[:len(t) - j] << np.uint64(shift * j)
        j += 1
    return h[:-1] & np.uint64(mask)


def _last_written(h: np.ndarray, written: np.ndarray) -> np.ndarray:
    """For each i, ``written[j]`` for the last j < i with h[j] == h[i], else 0 (a table read)."""
    order = np.argsort(h, kind="stable")
    hs = h[order]
    prev = np.full(len(h), -1, dtype=np.int64)
    same = hs[1:] == hs[:-1]
    prev[order[1:][same]] = order[:-1][same]
    return np.where(prev >= 0, written[np.maximum(prev, 0)], np.uint64(0))


def encode(raw: bytes, width: int, level: int = DEFAULT_COMPRESSION_LEVEL) -> bytes:
    """FPC-encode ``raw`` as floats of ``width`` bytes with 2^level-entry predictors."""
    if width not in FPC_WIDTHS:
        raise ValueError(f"FPC float width must be 4 or 8, not {width}")
    if not 1 <= level <= MAX_COMPRESSION_LEVEL:
        raise ValueError(f"FPC level must be 1..{MAX_COMPRESSION_LEVEL}, not {level}")
    v = _values(bytes(raw), width)
    if len(v) == 0:
        return bytes((width, level))
    vmask = np.uint64((1 << (8 * width)) - 1) if width < 8 else np.uint64(0xFFFFFFFFFFFFFFFF)
    fs, fv, ds, dv = _HASH[width]
    # FCM: table[h] = value; prediction = table[h_i]
    fh = _hash_seq(v, fs, fv, level)
    fcm_pred = _last_written(fh, v)
    # DFCM: table[h] = value - previous value; prediction = table[h_i] + previous
    prevv = np.concatenate([np.zeros(1, np.uint64), v[:-1]])
    d = (v - prevv) & vmask
    dh = _hash_seq(d, ds, dv, level)
    dfcm_pred = (_last_written(dh, d) + prevv) & vmask
    c_f = fcm_pred ^ v
    c_d = dfcm_pred ^ v
    bits = 8 * width
    # compressValue(): the predictor with more leading zero *bits* wins, FCM on a tie
    lz_f = bits - bit_length(c_f)
    lz_d = bits - bit_length(c_d)
    use_d = lz_d > lz_f
    comp = np.where(use_d, c_d, c_f)
    zb = np.where(use_d, lz_d, lz_f) // 8
    if width == MAX_ZERO_BYTE_COUNT + 1:
        zb = np.where(zb >= 4, zb - 1, zb)
    zb = np.minimum(zb, MAX_ZERO_BYTE_COUNT)
    stored_zeros = np.where(zb > 3, zb + 1, zb) if width == 8 else zb
    tail = width - stored_zeros
    nib = (np.where(use_d, DFCM_BIT, 0) | zb).astype(np.uint8)
    header = (nib[0::2] << 4) | nib[1::2]
    vb = comp.astype(f"<u{width}").view(np.uint8).reshape(-1, width)
    keep = np.arange(width)[None, :] < tail[:, None]
    pairs = len(header)
    grid = np.zeros((pairs, 1 + 2 * width), dtype=np.uint8)
    gmask = np.zeros_like(grid, dtype=bool)
    grid[:, 0] = header
    gmask[:, 0] = True
    grid[:, 1:1 + width] = vb[0::2]
    grid[:, 1 + width:] = vb[1::2]
    gmask[:, 1:1 + width] = keep[0::2]
    gmask[:, 1 + width:] = keep[1::2]
    return bytes((width, level)) + grid[gmask].tobytes()


class _SparseTable(dict):
    """A predictor table that only stores the entries written (missing ones read 0)."""

    def __missing__(self, key: int) -> int:
        return 0


def decode(payload: bytes, uncompressed_size: int) -> bytes:
    """Undo FPC on one block payload (doDecompressData); exact size or DecodeError."""
    if len(payload) < 2:
        raise DecodeError("FPC: payload shorter than its 2-byte header")
    width, level = payload[0], payload[1]
    if level == 0 or level > MAX_COMPRESSION_LEVEL:
        raise DecodeError(f"FPC: bad level {level}")
    if width not in FPC_WIDTHS:
        raise DecodeError(f"FPC: bad float width {width}")
    n = -(-uncompressed_size // width)
    n += n % 2
    src = bytes(payload[2:])
    size = 1 << level
    mask = size - 1
    vmask = (1 << (8 * width)) - 1
    fs, fv, ds, dv = _HASH[width]
    if (n // 2) > len(src):
        raise DecodeError(f"FPC: {len(src)} bytes cannot hold {n} values")
    # the engine allocates 2^level entries per table; only touched ones matter,
    # so large levels use dicts (no 2 GiB allocation from a corrupt level byte)
    if size <= max(1 << 16, 4 * n):
        fcm = [0] * size
        dfcm = [0] * size
    else:
        fcm = _SparseTable()
        dfcm = _SparseTable()
    fh = dh = 0
    prev = 0
    out = [0] * n
    pos = 0
    end = len(src)
    is8 = width == 8
    frm = int.from_bytes
    j = 0
    for i in range(0, n, 2):
        if pos >= end:
            raise DecodeError(f"FPC: data ends at value {i} of {n}")
        h = src[pos]
        pos += 1
        for nib in (h >> 4, h & 0xF):
            z = nib & MAX_ZERO_BYTE_COUNT
            if is8 and z > 3:
                z += 1
            if z > width:
                raise DecodeError(f"FPC: zero byte count {z} at value {j}")
            t = width - z
            if pos + t > end:
                raise DecodeError(f"FPC: data ends at value {j} of {n}")
            c = frm(src[pos:pos + t], "little")
            pos += t
            if nib & DFCM_BIT:
                val = ((dfcm[dh] + prev) & vmask) ^ c
            else:
                val = fcm[fh] ^ c
            delta = (val - prev) & vmask
            dfcm[dh] = delta
            dh = ((dh << ds) ^ (delta >> dv)) & mask
            fcm[fh] = val
            fh = ((fh << fs) ^ (val >> fv)) & mask
            prev = val
            out[j] = val
            j += 1
    return np.array(out, dtype=np.uint64).astype(f"<u{width}").tobytes()[:uncompressed_size]
