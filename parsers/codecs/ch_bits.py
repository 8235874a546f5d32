"""MSB-first bit streams as ClickHouse's BitWriter / BitReader lay them out.

src/IO/BitHelpers.h: bits are written from the most significant bit of each
byte down, fields back to back, and the last byte is padded with zero bits.
DoubleDelta and Gorilla use this layout.  Both directions work on numpy
arrays of fields (value, bit count), in bounded chunks.
"""
from __future__ import annotations

import numpy as np

from .general import DecodeError


def read_item_header(payload: bytes, uncompressed_size: int, widths, codec: str):
    """The header DoubleDelta and Gorilla payloads share (their doDecompressData):
    value width byte, one reserved byte, ``size % width`` bytes copied as they
    are, then the item count (UInt32).

    Returns (width, head, src, count): ``src`` starts at the count; ``count`` is
    None when the stream legitimately ends before it (no whole item).
    """
    if len(payload) < 2:
        raise DecodeError(f"{codec}: payload shorter than its 2-byte header")
    width = payload[0]
    if width not in widths:
        raise DecodeError(f"{codec}: bad value width {width}")
    skip = uncompressed_size % width
    if 2 + skip > len(payload):
        raise DecodeError(f"{codec}: payload shorter than its skipped bytes")
    head = bytes(payload[2:2 + skip])
    src = memoryview(payload)[2 + skip:]
    expect = (uncompressed_size - skip) // width
    if len(src) < 4:
        if expect == 0:
            return width, head, src, None
        raise DecodeError(f"{codec}: no item count")
    count = int.from_bytes(src[:4], "little")
    if count != expect:
        raise DecodeError(f"{codec}: {count} items in the stream, header implies {expect}")
    return width, head, src, count

def pack_fields(values: np.ndarray, nbits: np.ndarray) -> bytes:
    """Write the low ``nbits[i]`` (0..64) bits of ``values[i]`` MSB-first, zero-padded to a byte.

    Each field lands in at most two big-endian 64-bit output words; fields are
    in order and never share bits, so each word is the OR (bitwise_or.reduceat)
    of the consecutive fields that start in it, plus the spill of the field
    before.
    """
    values = np.asarray(values, dtype=np.uint64)
    nbits = np.asarray(nbits, dtype=np.int64)
    keep = nbits > 0
    if not keep.all():
        values, nbits = values[keep], nbits[keep]
    if len(values) == 0:
        return b""
    ends = np.cumsum(nbits)
    total = int(ends[-1])
    off = ends - nbits
    word = off >> 6
    r = (off & 63).astype(np.uint64)
    n = nbits.astype(np.uint64)
    # left-align each field in 64 bits (a shift by 64 is undefined: n == 64 stays as is)
    a = np.where(nbits == 64, values, values << ((np.uint64(64) - n) & np.uint64(63)))
    head = a >> r
    spill = np.where(r > 0, a << ((np.uint64(64) - r) & np.uint64(63)), np.uint64(0))
    starts = np.flatnonzero(np.diff(word, prepend=-1))
    words = np.zeros(int(word[-1]) + 2, dtype=np.uint64)
    w = word[starts]
    words[w] |= np.bitwise_or.reduceat(head, starts)
    words[w + 1] |= np.bitwise_or.reduceat(spill, starts)
    return words.astype(">u8").tobytes()[:(total + 7) // 8]


class BitSource:
    """Random access to an MSB-first bit stream for field extraction.

    ``windows[i]`` is the big-endian 64-bit word starting at byte ``i``; with
    one more byte that covers any field of up to 64 bits at any bit offset.
    """

    def __init__(self, data: bytes):
        self.nbits = len(data) * 8
        buf = np.zeros(len(data) + 16, dtype=np.uint8)
        buf[:len(data)] = np.frombuffer(data, dtype=np.uint8)
        self.bytes = buf
        n = len(data) + 8
        w = np.zeros(n, dtype=np.uint64)
        for k in range(8):
            w |= buf[k:k + n].astype(np.uint64) << np.uint64(56 - 8 * k)
        self.windows = w

    def window_list(self) -> list[int]:
        """The windows as Python ints, for the sequential record scans."""
        return self.windows.tolist()

    def extract(self, starts: np.ndarray, nbits: np.ndarray) -> np.ndarray:
        """Fields of ``nbits`` (0..64) bits at bit offsets ``starts`` as uint64."""
        starts = np.asarray(starts, dtype=np.int64)
        nbits = np.asarray(nbits, dtype=np.int64)
        if len(starts) == 0:
            return np.zeros(0, dtype=np.uint64)
        if int(starts.min()) < 0 or int((starts + nbits).max()) > self.nbits:
            raise DecodeError("bit stream: a field runs past the end of the data")
        q = starts >> 3
        r = (starts & 7).astype(np.uint64)
        hi = self.windows[q] << r
        lo = self.bytes[q + 8].astype(np.uint64) >> (np.uint64(8) - r)
        top = hi | lo                                  # 64 bits starting at the field
        out = np.zeros(len(starts), dtype=np.uint64)
        nz = nbits > 0
        out[nz] = top[nz] >> (np.uint64(64) - nbits[nz].astype(np.uint64))
        return out


def leading_zeros(x: np.ndarray, width_bits: int) -> np.ndarray:
    """Count of leading zero bits of each value within ``width_bits`` (width_bits for 0)."""
    return width_bits - bit_length(x)


def bit_length(x: np.ndarray) -> np.ndarray:
    """Number of significant bits of each uint64 (0 for 0)."""
    x = np.asarray(x, dtype=np.uint64)
    n = np.zeros(len(x), dtype=np.int64)
    y = x.copy()
    for s in (32, 16, 8, 4, 2, 1):
        big = y >= (np.uint64(1) << np.uint64(s))
        n += np.where(big, s, 0)
        y = np.where(big, y >> np.uint64(s), y)
    n += (y > 0)
    return n


def trailing_zeros(x: np.ndarray, width_bits: int) -> np.ndarray:
    """Count of trailing zero bits (width_bits for 0)."""
    x = np.asarray(x, dtype=np.uint64)
    low = x & (~x + np.uint64(1))          # lowest set bit
    n = bit_length(low) - 1
    n[x == 0] = width_bits
    return n
