"""The x1764 checksum PerconaFT puts after every header, table, node and sub-block.

Source: PerconaFT ``util/x1764.cc`` (``toku_x1764_memory``).  The input is read as
little-endian 64-bit words; ``sum = sum * 17 + word`` modulo 2**64, a final
partial word is taken as a little-endian integer of the remaining bytes, and the
result is ``~(low32(sum) ^ high32(sum))`` as 32 bits.  The engine computes it four
words at a time; the value is the same.

Large inputs are summed with numpy: the sum is the polynomial
``sum(word[i] * 17**(n-1-i))`` modulo 2**64, which uint64 arithmetic gives directly.
"""
from __future__ import annotations

import struct

import numpy as np

_MASK64 = (1 << 64) - 1
_NUMPY_FROM = 256          # bytes: below this a Python loop is faster
_pow_cache = np.ones(1, dtype=np.uint64)


def _powers(n: int) -> np.ndarray:
    """17**k mod 2**64 for k in [0, n), cached and grown geometrically."""
    global _pow_cache
    if len(_pow_cache) < n:
        size = max(n, 2 * len(_pow_cache))
        p = np.empty(size, dtype=np.uint64)
        p[0] = 1
        # doubling: p[k:2k] = p[0:k] * 17**k  (uint64 arithmetic wraps mod 2**64)
        k = 1
        with np.errstate(over="ignore"):
            while k < size:
                m = min(k, size - k)
                step = np.uint64(pow(17, k, 1 << 64))
                p[k:k + m] = p[:m] * step
                k += m
        _pow_cache = p
    return _pow_cache[:n]


def _fold(total: int) -> int:
    return (~((total & 0xFFFFFFFF) ^ (total >> 32))) & 0xFFFFFFFF


def x1764(data) -> int:
    """The 32-bit x1764 checksum of ``data`` (bytes, bytearray, memoryview or uint8 array)."""
    if not isinstance(data, (bytes, bytearray)):
        data = bytes(data)
    n = len(data)
    nwords = n // 8
    if n < _NUMPY_FROM:
        total = 0
        for w in struct.unpack_from(f"<{nwords}Q", data):
            total = (total * 17 + w) & _MASK64
    else:
        words = np.frombuffer(data, dtype="<u8", count=nwords)
        with np.errstate(over="ignore"):
            total = int(np.dot(words, _powers(nwords)[::-1])) & _MASK64
    rem = n - 8 * nwords
    if rem:
        total = (total * 17 + int.from_bytes(data[8 * nwords:], "little")) & _MASK64
    return _fold(total)
