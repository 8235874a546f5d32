"""Compression method bytes of sub-blocks and their decoders.

Source: PerconaFT ``ft/serialize/compress.cc`` (``toku_compress`` /
``toku_decompress``) and ``compress.h`` (``enum toku_compression_method``).
The first byte of every compressed payload is an "rfc1950-style" header: its
low nibble is the method, the high nibble a level hint (QuickLZ 0x39 = 9 + 3<<4,
LZMA 0x2a = 10 + 2<<4, zlib-without-checksum 0x5b = 11 + 5<<4, then a second
byte holding the window bits, -15).  A zlib stream's own CMF byte 0x78 has low
nibble 8 = TOKU_ZLIB_METHOD, so the whole payload is the zlib stream.  The
engine dispatches on the low nibble; so do we.
"""
from __future__ import annotations

import lzma
import zlib

from ..codecs import quicklz
from ..codecs.general import (DEFAULT_MAX_OUTPUT, DecodeError, snappy_decompress,
                              zlib_decompress)

# compress.h: enum toku_compression_method
TOKU_NO_COMPRESSION = 0
TOKU_DEFAULT_COMPRESSION_METHOD = 1
TOKU_FAST_COMPRESSION_METHOD = 2
TOKU_SMALL_COMPRESSION_METHOD = 3
TOKU_SNAPPY_METHOD = 7
TOKU_ZLIB_METHOD = 8
TOKU_QUICKLZ_METHOD = 9
TOKU_LZMA_METHOD = 10
TOKU_ZLIB_WITHOUT_CHECKSUM_METHOD = 11

METHOD_NAMES = {
    TOKU_NO_COMPRESSION: "none",
    TOKU_SNAPPY_METHOD: "snappy",
    TOKU_ZLIB_METHOD: "zlib",
    TOKU_QUICKLZ_METHOD: "quicklz",
    TOKU_LZMA_METHOD: "lzma",
    TOKU_ZLIB_WITHOUT_CHECKSUM_METHOD: "zlib_without_checksum",
}
KNOWN_METHODS = frozenset(METHOD_NAMES)
#: liblzma memory limit for one sub-block decoder (dictionary and state)
LZMA_MEMLIMIT = 128 * 1024 * 1024


def method_of(first_byte: int) -> int:
    """The method number a payload's first byte encodes (its low nibble)."""
    return first_byte & 0x0F


def method_name(first_byte: int) -> str:
    return METHOD_NAMES.get(first_byte & 0x0F, f"unknown(0x{first_byte:02x})")


def decompress(payload, uncompressed_size: int, max_output: int = DEFAULT_MAX_OUTPUT) -> bytes:
    """Decode one sub-block payload (method byte included) to exactly
    ``uncompressed_size`` bytes, or raise DecodeError."""
    if uncompressed_size > max_output:
        raise DecodeError(f"sub-block claims {uncompressed_size} bytes, over the cap of {max_output}")
    out = _decode(payload, uncompressed_size, uncompressed_size, None)
    if len(out) != uncompressed_size:
        raise DecodeError(f"{method_name(payload[0])}: decoded {len(out)} bytes, sub-block says "
                          f"{uncompressed_size}")
    return out


def decompress_prefix(payload, uncompressed_size: int, n: int) -> bytes:
    """The first ``n`` decoded bytes of a sub-block, decoding as little as possible
    (used to read a basement's entry count or a buffer's message count)."""
    n = min(n, uncompressed_size)
    return _decode(payload, uncompressed_size, n, n)[:n]


def _decode(payload, usize: int, cap: int, stop: int | None) -> bytes:
    if len(payload) < 1:
        raise DecodeError("empty sub-block payload (no method byte)")
    first = payload[0]
    m = first & 0x0F
    if m == TOKU_NO_COMPRESSION:
        if len(payload) - 1 != usize:
            raise DecodeError(f"uncompressed sub-block holds {len(payload) - 1} bytes, says {usize}")
        return bytes(payload[1:1 + cap])
    if m == TOKU_ZLIB_METHOD:
        if stop is not None:
            d = zlib.decompressobj()
            try:
                return d.decompress(payload, stop)
            except zlib.error as e:
                raise DecodeError(f"zlib: {e}") from None
        return zlib_decompress(bytes(payload), max_output=cap)
    if m == TOKU_ZLIB_WITHOUT_CHECKSUM_METHOD:
        if len(payload) < 2:
            raise DecodeError("zlib-without-checksum payload lacks its window-bits byte")
        wbits = payload[1] - 256 if payload[1] >= 128 else payload[1]
        if not -15 <= wbits <= -8:
            raise DecodeError(f"zlib-without-checksum: bad window bits {wbits}")
        if stop is not None:
            d = zlib.decompressobj(wbits)
            try:
                return d.decompress(payload[2:], stop)
            except zlib.error as e:
                raise DecodeError(f"zlib: {e}") from None
        return zlib_decompress(bytes(payload[2:]), max_output=cap, wbits=wbits)
    if usize == 0 and len(payload) == 1 and m in (TOKU_QUICKLZ_METHOD, TOKU_LZMA_METHOD):
        return b""          # compress.cc: an empty input is just the method byte
    if m == TOKU_QUICKLZ_METHOD:
        return quicklz.decompress(payload[1:], max_output=cap if stop is None else usize,
                                  expected_size=usize, stop_after=stop)
    if m == TOKU_LZMA_METHOD:
        # memlimit: an xz header may declare a dictionary of up to 1.5 GiB, which
        # liblzma would allocate before decoding a byte (the engine writes 2-8 MiB)
        d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=LZMA_MEMLIMIT)
        want = stop if stop is not None else cap + 1
        try:
            out = d.decompress(bytes(payload[1:]), max_length=want)
        except lzma.LZMAError as e:
            raise DecodeError(f"lzma: {e}") from None
        if stop is None and len(out) > cap:
            raise DecodeError(f"lzma: decodes to more than {cap} bytes")
        return out
    if m == TOKU_SNAPPY_METHOD:
        if stop is not None:
            return _snappy_prefix(payload[1:], stop)
        return snappy_decompress(bytes(payload[1:]), max_output=cap)
    raise DecodeError(f"unknown compression method byte 0x{first:02x}")


def _snappy_prefix(src, n: int) -> bytes:
    """The first ``n`` bytes of a raw snappy block (varint length, then tagged
    elements: literals and back-references), decoding only what is needed."""
    p = 0
    shift = 0
    total = 0
    while True:
        if p >= len(src) or p > 4:
            raise DecodeError("snappy: bad length varint")
        b = src[p]
        p += 1
        total |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    n = min(n, total)
    out = bytearray()
    while len(out) < n:
        if p >= len(src):
            raise DecodeError("snappy: truncated block")
        tag = src[p]
        p += 1
        kind = tag & 3
        if kind == 0:                       # literal
            ln = tag >> 2
            if ln >= 60:
                k = ln - 59
                ln = int.from_bytes(bytes(src[p:p + k]), "little")
                p += k
            ln += 1
            out += bytes(src[p:p + min(ln, n - len(out))])
            p += ln
            continue
        if p + (1, 2, 4)[kind - 1] > len(src):
            raise DecodeError("snappy: truncated block (copy offset cut off)")
        if kind == 1:
            ln = ((tag >> 2) & 7) + 4
            off = ((tag >> 5) << 8) | src[p]
            p += 1
        elif kind == 2:
            ln = (tag >> 2) + 1
            off = int.from_bytes(bytes(src[p:p + 2]), "little")
            p += 2
        else:
            ln = (tag >> 2) + 1
            off = int.from_bytes(bytes(src[p:p + 4]), "little")
            p += 4
        if off == 0 or off > len(out):
            raise DecodeError("snappy: bad back-reference")
        for _ in range(ln):
            out.append(out[-off])
    return bytes(out[:n])
