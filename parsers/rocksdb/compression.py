"""Block compression types and their framing (RocksDB include/rocksdb/compression_type.h,
util/compression.h ``UncompressBlockData``, ``GetDecompressedSizeInfo``,
``Snappy_Uncompress``, ``Zlib_Uncompress``, ``LZ4_Uncompress``, ``ZSTD_Uncompress``).

``compress_format_version`` is 2 for tables of format_version >= 2, else 1:

* snappy: the raw snappy block (its own length varint first), either version;
* zlib, bzip2, lz4, lz4hc, xpress: version 2 starts with the uncompressed size as a
  varint32; version 1 lz4 with a fixed64 size, zlib/bzip2 with nothing;
* zstd (and ZSTDNotFinal): always a varint32 size, then a zstd frame (with the
  table's ``rocksdb.compression_dict`` when it has one);
* zlib is raw deflate when window_bits < 0 (the default -14), else a zlib stream.
"""
from __future__ import annotations

from ..codecs import general
from ..codecs.general import DecodeError
from .coding import CodingError, fixed64, varint32

kNoCompression = 0x00
kSnappyCompression = 0x01
kZlibCompression = 0x02
kBZip2Compression = 0x03
kLZ4Compression = 0x04
kLZ4HCCompression = 0x05
kXpressCompression = 0x06
kZSTD = 0x07
kZSTDNotFinalCompression = 0x40
kDisableCompressionOption = 0xFF

#: the names RocksDB prints (CompressionTypeToString) and writes in the properties
COMPRESSION_NAMES = {
    kNoCompression: "NoCompression", kSnappyCompression: "Snappy", kZlibCompression: "Zlib",
    kBZip2Compression: "BZip2", kLZ4Compression: "LZ4", kLZ4HCCompression: "LZ4HC",
    kXpressCompression: "Xpress", kZSTD: "ZSTD", kZSTDNotFinalCompression: "ZSTDNotFinal",
}
#: the option spellings of OPTIONS files (kNoCompression ...) and MyRocks' cf options
OPTION_NAMES = {
    "kNoCompression": kNoCompression, "kSnappyCompression": kSnappyCompression,
    "kZlibCompression": kZlibCompression, "kBZip2Compression": kBZip2Compression,
    "kLZ4Compression": kLZ4Compression, "kLZ4HCCompression": kLZ4HCCompression,
    "kXpressCompression": kXpressCompression, "kZSTD": kZSTD,
    "kZSTDNotFinalCompression": kZSTDNotFinalCompression,
    "kDisableCompressionOption": kDisableCompressionOption,
}


def name_of(ctype: int) -> str:
    return COMPRESSION_NAMES.get(ctype, f"unknown(0x{ctype:02x})")


class BlockDecodeError(Exception):
    def __init__(self, message: str, offset: int = 0):
        self.offset = offset
        super().__init__(message)


def declared_size(ctype: int, payload, format_version: int) -> int | None:
    """The uncompressed size a compressed block declares in its first bytes (None when
    its framing holds none: zlib/bzip2 of format_version < 2)."""
    try:
        if ctype == kNoCompression:
            return len(payload)
        if ctype == kSnappyCompression:
            return varint32(payload, 0, min(len(payload), 5))[0]
        if ctype in (kZSTD, kZSTDNotFinalCompression) or format_version >= 2:
            return varint32(payload, 0, min(len(payload), 5))[0]
        if ctype in (kLZ4Compression, kLZ4HCCompression):
            return fixed64(payload, 0)
    except CodingError:
        return None
    return None


def uncompress(ctype: int, payload: bytes, format_version: int, max_output: int,
               dictionary: bytes | None = None, zlib_window_bits: int = -14) -> bytes:
    """A block's contents from its stored payload (UncompressBlockData), at most ``max_output`` bytes."""
    if ctype == kNoCompression:
        return bytes(payload)
    v2 = format_version >= 2
    try:
        if ctype == kSnappyCompression:
            return general.snappy_decompress(payload, max_output)
        if ctype in (kZSTD, kZSTDNotFinalCompression):
            n, p = varint32(payload, 0)
            if n > max_output:
                raise BlockDecodeError(f"declares {n} bytes, over the cap of {max_output}")
            body = payload[p:]
            out = (general.zstd_decompress_dict(body, dictionary, max_output) if dictionary
                   else general.zstd_decompress(body, max_output))
        elif ctype in (kLZ4Compression, kLZ4HCCompression):
            if v2:
                n, p = varint32(payload, 0)
            else:
                n, p = fixed64(payload, 0), 8
            if n > max_output:
                raise BlockDecodeError(f"declares {n} bytes, over the cap of {max_output}")
            return general.lz4_block_decompress(payload[p:], n, max_output)
        elif ctype == kZlibCompression:
            n, p = (varint32(payload, 0) if v2 else (None, 0))
            if n is not None and n > max_output:
                raise BlockDecodeError(f"declares {n} bytes, over the cap of {max_output}")
            out = general.zlib_decompress(payload[p:], max_output, wbits=zlib_window_bits)
        elif ctype == kBZip2Compression:
            n, p = (varint32(payload, 0) if v2 else (None, 0))
            if n is not None and n > max_output:
                raise BlockDecodeError(f"declares {n} bytes, over the cap of {max_output}")
            out = general.bzip2_decompress(payload[p:], max_output)
        else:
            raise BlockDecodeError(f"compression type {name_of(ctype)} cannot be decoded here")
    except CodingError as e:
        raise BlockDecodeError(f"{name_of(ctype)} size prefix: {e}", e.offset) from None
    except DecodeError as e:
        raise BlockDecodeError(f"{name_of(ctype)}: {e}") from None
    if v2 and n is not None and len(out) != n:
        raise BlockDecodeError(f"{name_of(ctype)}: {len(out)} bytes decoded, {n} declared")
    return out


def compress(ctype: int, data: bytes, level: int | None = None, format_version: int = 2,
             dictionary: bytes | None = None) -> bytes:
    """A block's stored payload as RocksDB frames it (CompressBlock), for the what-if."""
    from .coding import encode_varint32
    prefix = encode_varint32(len(data))
    if ctype == kNoCompression:
        return bytes(data)
    if ctype == kSnappyCompression:
        return general.snappy_compress(data)
    if ctype in (kZSTD, kZSTDNotFinalCompression):
        lvl = 3 if level is None or level == 32767 else level
        return prefix + general.zstd_compress(data, lvl)
    if ctype == kLZ4Compression:
        return prefix + general.lz4_block_compress(data)
    if ctype == kLZ4HCCompression:
        return prefix + general.lz4_block_compress(data, level or 0, hc=True)
    if ctype == kZlibCompression:
        import zlib
        c = zlib.compressobj(6 if level is None or level == 32767 else level, zlib.DEFLATED, -14)
        return prefix + c.compress(data) + c.flush()
    if ctype == kBZip2Compression:
        return prefix + general.bzip2_compress(data)
    raise ValueError(f"cannot encode {name_of(ctype)}")
