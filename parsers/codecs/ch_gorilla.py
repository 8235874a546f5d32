"""ClickHouse Gorilla codec (method byte 0x95): payload after the 9-byte block header.

src/Compression/CompressionCodecGorilla.cpp: ``[width][bytes_to_skip]``, the
skipped leading bytes, ``UInt32 items_count``, the first value (width bytes),
then per further value an MSB-first bit record (src/IO/BitHelpers.h) of
``xor = value ^ previous``: ``0`` when xor is 0; ``10`` + the xor's bits in
the previous window (previous 11-record's leading/trailing zero counts) when
it fits there; else ``11``, the leading-zero count in LEADING_ZEROES_BIT_LENGTH
bits, the significant-bit count in DATA_BIT_LENGTH bits (getBitLengthOfLength:
4/5/6/7 for 1/2/4/8-byte values) and those bits; that window becomes current.

Window choice is sequential (a short Python loop over the non-zero xors); the
bit packing and the value reconstruction are numpy.
"""
from __future__ import annotations

import struct

import numpy as np

from .ch_bits import BitSource, bit_length, pack_fields, read_item_header, trailing_zeros
from .general import DecodeError

GORILLA_WIDTHS = (1, 2, 4, 8)

#: getBitLengthOfLength(): bits that store a data-bit count, per value width
DATA_BIT_LENGTH = {1: 4, 2: 5, 4: 6, 8: 7}


def encode(raw: bytes, width: int) -> bytes:
    """Gorilla-encode ``raw`` as values of ``width`` bytes (doCompressData)."""
    if width not in GORILLA_WIDTHS:
        raise ValueError(f"Gorilla width must be 1, 2, 4 or 8, not {width}")
    raw = bytes(raw)
    skip = len(raw) % width
    udt = np.dtype(f"<u{width}")
    vals = np.frombuffer(raw, dtype=udt, offset=skip)
    n = len(vals)
    out = [bytes((width, skip)), raw[:skip], struct.pack("<I", n)]
    if n >= 1:
        out.append(vals[:1].tobytes())
    if n >= 2:
        out.append(_pack_xors((vals[1:] ^ vals[:-1]).astype(np.uint64), width))
    return b"".join(out)


def _pack_xors(x: np.ndarray, width: int) -> bytes:
    bits = 8 * width
    B = DATA_BIT_LENGTH[width]
    L = B - 1
    lz = bits - bit_length(x)
    tz = trailing_zeros(x, bits)
    db = np.where(x == 0, 0, bits - lz - tz)
    nz = np.flatnonzero(x)
    # sequential window choice over the non-zero xors: a value reuses the window
    # of the last '11' record (prefix 10) when it fits, else it opens a new one
    opened = []
    plz = ptz = 1 << 8          # no window yet: the first value opens one
    for j, (a, b) in enumerate(zip(lz[nz].tolist(), tz[nz].tolist())):
        if a < plz or b < ptz:
            opened.append(j)
            plz, ptz = a, b
    is_new = np.zeros(len(nz), dtype=bool)
    is_new[opened] = True
    owner = np.maximum.accumulate(np.where(is_new, np.arange(len(nz)), 0)) if len(nz) else \
        np.zeros(0, dtype=np.int64)
    use_prev = ~is_new
    win_tz = tz[nz][owner]
    win_db = db[nz][owner]
    head_val = np.zeros(len(x), dtype=np.uint64)
    head_bits = np.ones(len(x), dtype=np.int64)
    data_val = np.zeros(len(x), dtype=np.uint64)
    data_bits = np.zeros(len(x), dtype=np.int64)
    hv = np.where(use_prev, np.uint64(0b10),
                  (np.uint64(0b11) << np.uint64(L + B))
                  | (lz[nz].astype(np.uint64) << np.uint64(B)) | win_db.astype(np.uint64))
    head_val[nz] = hv
    head_bits[nz] = np.where(use_prev, 2, 2 + L + B)
    data_val[nz] = x[nz] >> win_tz.astype(np.uint64)
    data_bits[nz] = win_db
    values = np.stack([head_val, data_val], axis=1).ravel()
    nbits = np.stack([head_bits, data_bits], axis=1).ravel()
    return pack_fields(values, nbits)


def decode(payload: bytes, uncompressed_size: int) -> bytes:
    """Undo Gorilla on one block payload (doDecompressData); exact size or DecodeError."""
    width, head, src, count = read_item_header(payload, uncompressed_size, GORILLA_WIDTHS, "Gorilla")
    if count is None:
        return head
    if count == 0:
        return head
    if len(src) < 4 + width:
        raise DecodeError("Gorilla: truncated before the first value")
    udt = np.dtype(f"<u{width}")
    first = int(np.frombuffer(src, dtype=udt, count=1, offset=4)[0])
    if count - 1 > 8 * (len(src) - 4 - width):
        raise DecodeError(f"Gorilla: {len(src) - 4 - width} bytes of bit stream cannot hold {count - 1} items")
    bits = BitSource(bytes(src[4 + width:]))
    idx, starts, nb, tz = _scan_records(bits, count - 1, width)
    xors = np.zeros(count, dtype=np.uint64)
    xors[0] = first
    if idx:
        f = bits.extract(np.asarray(starts, dtype=np.int64), np.asarray(nb, dtype=np.int64))
        xors[np.asarray(idx, dtype=np.int64) + 1] = f << np.asarray(tz, dtype=np.uint64)
    vals = np.bitwise_xor.accumulate(xors)
    return head + vals.astype(udt).tobytes()


def _scan_records(bits: BitSource, m: int, width: int):
    """Walk ``m`` records; (record index, data start, data bits, trailing zeros) of the non-zero ones."""
    W = bits.window_list()
    total = bits.nbits
    nbits_val = 8 * width
    B = DATA_BIT_LENGTH[width]
    L = B - 1
    hdr = 2 + L + B
    bmask = (1 << B) - 1
    idx: list[int] = []
    starts: list[int] = []
    nb: list[int] = []
    tzs: list[int] = []
    plz = pdb = ptz = 0
    have = False
    pos = 0
    k = 0
    while k < m:
        q = pos >> 3
        if q >= len(W):
            raise DecodeError("Gorilla: bit stream ends before all items")
        w = (W[q] << (pos & 7)) & 0xFFFFFFFFFFFFFFFF
        if w < 0x8000000000000000:
            z = 64 - w.bit_length()          # run of '0' records
            if z > 57:
                z = 57
            if z > m - k:
                z = m - k
            k += z
            pos += z
            continue
        if w >> 62 == 0b11:
            v = w >> (64 - hdr)
            plz = (v >> B) & ((1 << L) - 1)
            pdb = v & bmask
            if pdb == 0 or plz + pdb > nbits_val:
                raise DecodeError(f"Gorilla: corrupt record at bit {pos} ({plz} leading zeros, {pdb} data bits)")
            ptz = nbits_val - plz - pdb
            have = True
            start = pos + hdr
        else:
            if not have:
                raise DecodeError(f"Gorilla: record at bit {pos} reuses a window before any was set")
            start = pos + 2
        idx.append(k)
        starts.append(start)
        nb.append(pdb)
        tzs.append(ptz)
        pos = start + pdb
        k += 1
    if pos > total:
        raise DecodeError("Gorilla: bit stream ends before all items")
    return idx, starts, nb, tzs
