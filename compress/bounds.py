"""Worst-case compressed sizes: the most a codec can write for n input bytes, as each
library (and ClickHouse, for its own codecs) declares it to size its output buffer.

The storage models' ``max_bytes`` build on these so that a what-if interval never
leaves what the engine can physically write (issue 17, "Intervals").  Sources:

* zlib ``compressBound`` (compress.c): n + (n >> 12) + (n >> 14) + (n >> 25) + 13;
* lz4 ``LZ4_COMPRESSBOUND`` (lz4.h): n + n / 255 + 16 (lz4hc writes the same format);
* zstd ``ZSTD_COMPRESSBOUND`` (zstd.h): n + (n >> 8) + ((128 KiB - n) >> 11 below 128 KiB);
* liblzma ``lzma_stream_buffer_bound`` (stream_buffer_encoder.c, block_buffer_encoder.c):
  LZMA2 adds 3 bytes per 64 KiB chunk + 1, rounded up to 4; + 92 bytes of block headers
  (a 64-byte check at most) + 48 of stream header, footer and index;
* bzip2 (bzlib manual, ``BZ2_bzBuffToBuffCompress``): 1% more than the input + 600 bytes;
* snappy ``MaxCompressedLength`` (snappy.cc): 32 + n + n / 6;
* brotli ``BrotliEncoderMaxCompressedSize`` (enc/encode.c): n + 2 + 4 per 16 KiB + 4 (2 for n = 0);
* QuickLZ (its manual, and PerconaFT ft/serialize/compress.cc ``toku_compress_bound``): n + 400;
* ClickHouse (src/Compression/ICompressionCodec.h ``getCompressedReserveSize``: the 9-byte
  header + ``getMaxCompressedDataSize``; CompressionCodecMultiple.cpp for chains: 1 + one byte
  per codec + each codec's reserve size applied in turn; per codec: CompressionCodecLZ4.cpp
  LZ4_COMPRESSBOUND, CompressionCodecZSTD.cpp ZSTD_compressBound, CompressionCodecNone n,
  CompressionCodecDelta.cpp n + 2, CompressionCodecDoubleDelta.cpp and
  CompressionCodecGorilla.cpp 2 + w + their header + the widest item's bits per value,
  CompressionCodecT64.h n + 64 * 8 + 17, CompressionCodecGCD.cpp n + w + 2,
  CompressionCodecFPC.cpp header + even(count) * w + count / 2).
"""
from __future__ import annotations

import numpy as np

from .registry import Codec, _split_chain

_K128 = 128 * 1024


def _arr(n) -> np.ndarray:
    return np.asarray(n, dtype=np.int64)


def zlib_bound(n) -> np.ndarray:
    n = _arr(n)
    return n + (n >> 12) + (n >> 14) + (n >> 25) + 13


def lz4_bound(n) -> np.ndarray:
    n = _arr(n)
    return n + n // 255 + 16


def zstd_bound(n) -> np.ndarray:
    n = _arr(n)
    return n + (n >> 8) + np.where(n < _K128, (_K128 - n) >> 11, 0)


def lzma_bound(n) -> np.ndarray:
    """``lzma_stream_buffer_bound``: an .xz stream of one LZMA2 block (any check)."""
    n = _arr(n)
    lzma2 = n + -(-n // 65536) * 3 + 1
    lzma2 = (lzma2 + 3) & ~3
    return 92 + lzma2 + 48


def bzip2_bound(n) -> np.ndarray:
    n = _arr(n)
    return n + -(-n // 100) + 600


def snappy_bound(n) -> np.ndarray:
    n = _arr(n)
    return 32 + n + n // 6


def brotli_bound(n) -> np.ndarray:
    n = _arr(n)
    return np.where(n == 0, 2, n + 2 + 4 * (n >> 14) + 3 + 1)


def quicklz_bound(n) -> np.ndarray:
    return _arr(n) + 400


_GENERAL = {"none": _arr, "zlib": zlib_bound, "lz4": lz4_bound, "lz4hc": lz4_bound, "zstd": zstd_bound,
            "lzma": lzma_bound, "bzip2": bzip2_bound, "snappy": snappy_bound, "brotli": brotli_bound,
            "quicklz": quicklz_bound}


def compress_bound(codec: Codec, n) -> np.ndarray:
    """The most ``codec`` (a general codec, no engine framing) writes for inputs of ``n`` bytes."""
    if codec.is_chain:
        raise ValueError(f"{codec.name}: a ClickHouse chain; use ch_block_bound")
    return _GENERAL[codec.family](n)


# ---------------------------------------------------------------------------
# ClickHouse
#: ICompressionCodec::getHeaderSize (COMPRESSED_BLOCK_HEADER_SIZE) and the CityHash128 before it
CH_HEADER = 9
CH_CHECKSUM = 16
_WIDTHS = (1, 2, 4, 8)


def _dd_item_bits(w: int) -> int:
    """DoubleDelta: prefix + data bits of getDeltaWriteSpec(the largest signed value of w bytes)."""
    v = (1 << (8 * w - 1)) - 1
    if -63 < v < 64:
        return 2 + 7
    if -255 < v < 256:
        return 3 + 9
    if -2047 < v < 2048:
        return 4 + 12
    if -(1 << 31) < v < (1 << 31) - 1:
        return 5 + 32
    return 5 + 64


def _gorilla_item_bits(w: int) -> int:
    length_bits = {1: 4, 2: 5, 4: 6, 8: 7}[w]
    return 2 + (length_bits - 1) + length_bits + 8 * w


def _max_data(name: str, args: list[str], n: np.ndarray, type_size: int | None) -> np.ndarray:
    """ClickHouse ``getMaxCompressedDataSize`` of one codec of a chain."""
    name = name.upper()
    if name == "NONE":
        return n
    if name in ("LZ4", "LZ4HC"):
        return lz4_bound(n)
    if name == "ZSTD":
        return zstd_bound(n)
    if name == "DELTA":
        return n + 2
    if name == "T64":
        return n + 8 * 64 + 1 + 2 * 8
    if name in ("DOUBLEDELTA", "GORILLA"):
        widths = [int(args[0])] if args and name == "GORILLA" else ([type_size] if type_size in _WIDTHS
                                                                      else list(_WIDTHS))
        out = None
        for w in widths:
            if name == "DOUBLEDELTA":
                v = 2 + w + (4 + 2 * w) + (n // w * _dd_item_bits(w) + 7) // 8
            else:
                v = 2 + w + (4 + w) + (n // w * _gorilla_item_bits(w) + 8) // 8
            out = v if out is None else np.maximum(out, v)
        return out
    if name == "GCD":
        return n + (type_size if type_size else 32) + 2
    if name == "FPC":
        w = int(args[1]) if len(args) > 1 else (type_size or 4)
        count = -(-n // w)
        count = count + (count % 2)
        return 3 + count * w + count // 2
    raise ValueError(f"no worst case known for ClickHouse codec {name}")


def ch_block_bound(chain: str, n, type_size: int | None = None) -> np.ndarray:
    """The most a ClickHouse compressed block of ``n`` raw bytes can take with ``chain``:
    16-byte checksum + the codec's ``getCompressedReserveSize`` (9-byte header included)."""
    n = _arr(n)
    items = []
    for item in _split_chain(chain):
        name, _, rest = item.partition("(")
        items.append((name.strip(), [a.strip() for a in rest.rstrip(")").split(",") if a.strip()]))
    if len(items) == 1:
        return CH_CHECKSUM + CH_HEADER + _max_data(items[0][0], items[0][1], n, type_size)
    size = n
    for name, args in items:
        size = CH_HEADER + _max_data(name, args, size, type_size)
    return CH_CHECKSUM + CH_HEADER + 1 + len(items) + size
