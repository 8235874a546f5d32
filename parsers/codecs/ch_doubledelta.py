"""ClickHouse DoubleDelta codec (method byte 0x94): payload after the 9-byte block header.

src/Compression/CompressionCodecDoubleDelta.cpp: ``[width][bytes_to_skip]``,
the skipped leading bytes, then ``UInt32 items_count``, the first value and the
first delta (width bytes each, when present), then one MSB-first bit record
(src/IO/BitHelpers.h) per further value for its delta-of-delta ``dd``:
``0`` when dd == 0, else a prefix, the sign bit and ``|dd| - 1`` in
``data_bits - 1`` bits, with (prefix, data_bits) from getDeltaWriteSpec:
``10``/7 for -63 < dd < 64, ``110``/9 below ±255, ``1110``/12 below ±2047,
``11110``/32 strictly inside Int32, else ``11111``/64.  All arithmetic wraps
modulo 2^(8·width).

Encoding is vectorised; decoding scans the records with a short Python loop
(runs of zero records are skipped 57 at a time), then decodes values with numpy.
"""
from __future__ import annotations

import struct

import numpy as np

from .ch_bits import BitSource, pack_fields, read_item_header
from .general import DecodeError

DOUBLE_DELTA_WIDTHS = (1, 2, 4, 8)

# WRITE_SPEC_LUT in CompressionCodecDoubleDelta.cpp: the 5 high bits of the
# stream at a record start -> (prefix_bits, data_bits).
WRITE_SPEC_LUT = ([(1, 0)] * 16 + [(2, 7)] * 8 + [(3, 9)] * 4 + [(4, 12)] * 2
                  + [(5, 32), (5, 64)])

_M64 = (1 << 64) - 1


def encode(raw: bytes, width: int) -> bytes:
    """DoubleDelta-encode ``raw`` as values of ``width`` bytes (doCompressData)."""
    if width not in DOUBLE_DELTA_WIDTHS:
        raise ValueError(f"DoubleDelta width must be 1, 2, 4 or 8, not {width}")
    raw = bytes(raw)
    skip = len(raw) % width
    udt = np.dtype(f"<u{width}")
    vals = np.frombuffer(raw, dtype=udt, offset=skip)
    n = len(vals)
    out = [bytes((width, skip)), raw[:skip], struct.pack("<I", n)]
    if n >= 1:
        out.append(vals[:1].tobytes())
    if n >= 2:
        deltas = (vals[1:] - vals[:-1]).astype(udt)
        out.append(deltas[:1].tobytes())
        if n >= 3:
            dd = (deltas[1:] - deltas[:-1]).astype(udt)
            out.append(_pack_double_deltas(dd, width))
    return b"".join(out)


def _pack_double_deltas(dd: np.ndarray, width: int) -> bytes:
    sdt = np.dtype(f"<i{width}")
    sd = dd.view(sdt).astype(np.int64)
    i32min, i32max = -(1 << 31), (1 << 31) - 1
    prefix_bits = np.full(len(sd), 5, dtype=np.int64)
    prefix = np.full(len(sd), 0b11111, dtype=np.uint64)
    data_bits = np.full(len(sd), 64, dtype=np.int64)
    # assign from the widest class down so the narrowest match wins
    for lo, hi, pb, pf, db in ((i32min, i32max, 5, 0b11110, 32), (-2047, 2048, 4, 0b1110, 12),
                               (-255, 256, 3, 0b110, 9), (-63, 64, 2, 0b10, 7)):
        m = (sd > lo) & (sd < hi)
        prefix_bits[m], prefix[m], data_bits[m] = pb, pf, db
    zero = sd == 0
    prefix_bits[zero], prefix[zero], data_bits[zero] = 1, 0, 0
    sign = (sd < 0).astype(np.uint64)
    # |dd| - 1 as the unsigned delta type (the engine's std::abs(signed_dd) - 1)
    mag = np.where(sd < 0, (-sd.astype(np.uint64)), sd.astype(np.uint64))
    absv = (mag - np.uint64(1)) & np.uint64((1 << (8 * width)) - 1 if width < 8 else _M64)
    # one field: prefix, then sign, then data_bits - 1 bits of |dd| - 1
    nz = ~zero
    body_bits = np.where(nz, data_bits - 1, 0)
    low_mask = np.where(body_bits >= 64, np.uint64(_M64),
                        (np.uint64(1) << np.minimum(body_bits, 63).astype(np.uint64)) - np.uint64(1))
    head_val = np.where(nz, (prefix << np.uint64(1)) | sign, np.uint64(0))
    head_bits = np.where(nz, prefix_bits + 1, 1)
    values = np.stack([head_val, absv & low_mask], axis=1).ravel()
    nbits = np.stack([head_bits, body_bits], axis=1).ravel()
    return pack_fields(values, nbits)


def decode(payload: bytes, uncompressed_size: int) -> bytes:
    """Undo DoubleDelta on one block payload (doDecompressData); exact size or DecodeError."""
    width, head, src, count = read_item_header(payload, uncompressed_size, DOUBLE_DELTA_WIDTHS, "DoubleDelta")
    if count is None:
        return head
    udt = np.dtype(f"<u{width}")
    if count == 0:
        return head
    need = 4 + width * min(count, 2)
    if len(src) < need:
        raise DecodeError("DoubleDelta: truncated before the first values")
    first = int(np.frombuffer(src, dtype=udt, count=1, offset=4)[0])
    if count == 1:
        return head + bytes(src[4:4 + width])
    first_delta = int(np.frombuffer(src, dtype=udt, count=1, offset=4 + width)[0])
    m = count - 2
    if m > 8 * (len(src) - need):
        raise DecodeError(f"DoubleDelta: {len(src) - need} bytes of bit stream cannot hold {m} items")
    bits = BitSource(bytes(src[4 + 2 * width:]))
    idx, starts, dbits = _scan_records(bits, m)
    dd = np.zeros(m, dtype=np.uint64)
    if len(idx):
        dbits_a = np.asarray(dbits, dtype=np.int64)
        field = bits.extract(np.asarray(starts, dtype=np.int64), dbits_a)
        sh = (dbits_a - 1).astype(np.uint64)
        sign = (field >> sh) & np.uint64(1)
        absv = field & ((np.uint64(1) << sh) - np.uint64(1))
        d = absv + np.uint64(1)
        d = np.where(sign == 1, np.uint64(0) - d, d)
        dd[np.asarray(idx, dtype=np.int64)] = d
    # delta_k = first_delta + sum(dd), value_k = first + sum(deltas), all wrapping
    deltas = np.empty(m + 1, dtype=np.uint64)
    deltas[0] = first_delta
    deltas[1:] = dd
    np.cumsum(deltas, out=deltas)
    vals = np.empty(count, dtype=np.uint64)
    vals[0] = first
    vals[1:] = deltas
    np.cumsum(vals, out=vals)
    return head + vals.astype(udt).tobytes()


def _scan_records(bits: BitSource, m: int) -> tuple[list[int], list[int], list[int]]:
    """Walk ``m`` records; returns (record index, data start bit, data bits) of the non-zero ones."""
    W = bits.window_list()
    total = bits.nbits
    lut = WRITE_SPEC_LUT
    idx: list[int] = []
    starts: list[int] = []
    dbits: list[int] = []
    pos = 0
    k = 0
    while k < m:
        q = pos >> 3
        if q >= len(W):
            raise DecodeError("DoubleDelta: bit stream ends before all items")
        w = (W[q] << (pos & 7)) & 0xFFFFFFFFFFFFFFFF
        if w < 0x8000000000000000:
            z = 64 - w.bit_length()          # run of '0' records (one bit each)
            if z > 57:
                z = 57
            if z > m - k:
                z = m - k
            k += z
            pos += z
            continue
        pb, db = lut[w >> 59]
        idx.append(k)
        starts.append(pos + pb)
        dbits.append(db)
        pos += pb + db
        k += 1
    if pos > total:
        raise DecodeError("DoubleDelta: bit stream ends before all items")
    return idx, starts, dbits
