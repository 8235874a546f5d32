"""General-purpose codecs with bounded output: zlib, lz4 (block), zstd, lzma,
bzip2, snappy, brotli.

Every decoder takes ``max_output`` and raises :class:`DecodeError` rather than
allocating more (decompression bombs).  Parsers decode with these; the
compressor layer re-encodes with the same functions.
"""
from __future__ import annotations

import bz2
import lzma
import threading
import zlib

import cramjam
import lz4.block
import zstandard

#: Hard ceiling for any single decoded unit (a page, block or partition).
DEFAULT_MAX_OUTPUT = 256 * 1024 * 1024


class DecodeError(Exception):
    """A payload could not be decoded (corrupt, unknown, or over the size cap)."""


def _check_cap(n: int, max_output: int, codec: str) -> None:
    if n > max_output:
        raise DecodeError(f"{codec}: claims {n} bytes, over the cap of {max_output}")


# -- zlib -------------------------------------------------------------------
def zlib_decompress(data: bytes, max_output: int = DEFAULT_MAX_OUTPUT, wbits: int = zlib.MAX_WBITS) -> bytes:
    """Inflate a zlib (or raw, with negative wbits) stream, stopping at the cap."""
    d = zlib.decompressobj(wbits)
    try:
        out = d.decompress(data, max_output + 1)
    except zlib.error as e:
        raise DecodeError(f"zlib: {e}") from None
    _check_cap(len(out), max_output, "zlib")
    return out


def zlib_compress(data: bytes, level: int = 6) -> bytes:
    return zlib.compress(data, level)


# -- lz4 block --------------------------------------------------------------
def lz4_block_decompress(data: bytes, uncompressed_size: int, max_output: int = DEFAULT_MAX_OUTPUT) -> bytes:
    """Decode one raw LZ4 block whose decoded size is known."""
    _check_cap(uncompressed_size, max_output, "lz4")
    try:
        out = lz4.block.decompress(data, uncompressed_size=uncompressed_size)
    except (lz4.block.LZ4BlockError, ValueError) as e:
        raise DecodeError(f"lz4: {e}") from None
    return out


def lz4_block_decompress_partial(data: bytes, capacity: int) -> bytes:
    """Decode a raw LZ4 block whose exact decoded size is unknown but at most ``capacity``."""
    try:
        return lz4.block.decompress(data, uncompressed_size=capacity, return_bytearray=False)
    except lz4.block.LZ4BlockError:
        pass
    try:
        return bytes(cramjam.lz4.decompress_block(data, output_len=capacity))
    except Exception as e:  # cramjam raises its own error type
        raise DecodeError(f"lz4: {e}") from None


_scratch = threading.local()


def _scratch_buffer(need: int) -> bytearray:
    """A per-thread output buffer of at least ``need`` bytes, reused across calls."""
    buf = getattr(_scratch, "buf", None)
    if buf is None or len(buf) < need:
        buf = _scratch.buf = bytearray(max(need, 1 << 17))
    return buf


def lz4_block_compressed_size(data: bytes) -> int:
    """``len(lz4_block_compress(data))`` without building the bytes: LZ4_compress_default
    into a per-thread buffer of LZ4_COMPRESSBOUND bytes (cramjam's ``compress_block_into``,
    which releases the GIL), as ``lz4 -b`` does.  At 16 KiB pages the allocation
    and copy of the output cost about 6% of the speed."""
    n = len(data)
    return cramjam.lz4.compress_block_into(data, _scratch_buffer(n + n // 255 + 16), store_size=False)


def lz4_block_compress(data: bytes, level: int = 0, hc: bool = False) -> bytes:
    """A raw LZ4 block as LZ4_compress_default (acceleration 1) writes it -- what
    ClickHouse and MariaDB's page compression call.  python-lz4's block API runs
    LZ4_compress_fast_continue, whose 32-bit hash table gives different (valid)
    bytes for inputs under 64 KiB; cramjam calls LZ4_compress_default."""
    if hc:
        return lz4.block.compress(data, mode="high_compression", compression=level or 9, store_size=False)
    return bytes(cramjam.lz4.compress_block(data, store_size=False))


# -- zstd -------------------------------------------------------------------
_zstd_local = threading.local()


def _zstd_dctx() -> zstandard.ZstdDecompressor:
    """One decompressor per thread (a ZstdDecompressor must not be shared across threads)."""
    d = getattr(_zstd_local, "dctx", None)
    if d is None:
        d = _zstd_local.dctx = zstandard.ZstdDecompressor()
    return d


def zstd_decompress(data: bytes, max_output: int = DEFAULT_MAX_OUTPUT, size_hint: int | None = None) -> bytes:
    """Decode a zstd frame, never producing more than ``max_output`` bytes.

    Frames that declare their size (the usual case) are decoded in one call
    after the declared size is checked against the cap; others are streamed
    and stopped at the cap."""
    if size_hint is not None:
        _check_cap(size_hint, max_output, "zstd")
    d = _zstd_dctx()
    try:
        declared = zstandard.frame_content_size(data)
    except zstandard.ZstdError as e:
        raise DecodeError(f"zstd: {e}") from None
    if declared >= 0:
        _check_cap(declared, max_output, "zstd")
        try:
            out = d.decompress(data, max_output_size=max_output)
        except zstandard.ZstdError as e:
            raise DecodeError(f"zstd: {e}") from None
        _check_cap(len(out), max_output, "zstd")
        return out
    chunks: list[bytes] = []
    got = 0
    try:
        with d.stream_reader(data, read_across_frames=True) as r:
            while got <= max_output:
                chunk = r.read(min(1 << 20, max_output + 1 - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
    except zstandard.ZstdError as e:
        raise DecodeError(f"zstd: {e}") from None
    _check_cap(got, max_output, "zstd")
    return b"".join(chunks)


_ZSTD_DICTS: dict[bytes, zstandard.ZstdCompressionDict] = {}


def _zstd_dict(dict_data: bytes) -> zstandard.ZstdCompressionDict:
    """A zstd dictionary object for raw or trained dictionary bytes (cached by content)."""
    d = _ZSTD_DICTS.get(dict_data)
    if d is None:
        if len(_ZSTD_DICTS) > 64:
            _ZSTD_DICTS.clear()
        d = _ZSTD_DICTS[dict_data] = zstandard.ZstdCompressionDict(dict_data)
    return d


def zstd_decompress_dict(data: bytes, dict_data: bytes, max_output: int = DEFAULT_MAX_OUTPUT) -> bytes:
    """Decode a zstd frame written with a dictionary (RocksDB ``rocksdb.compression_dict``),
    never producing more than ``max_output`` bytes."""
    try:
        declared = zstandard.frame_content_size(data)
        if declared >= 0:
            _check_cap(declared, max_output, "zstd")
        out = zstandard.ZstdDecompressor(dict_data=_zstd_dict(dict_data)).decompress(
            data, max_output_size=max_output)
    except zstandard.ZstdError as e:
        raise DecodeError(f"zstd: {e}") from None
    _check_cap(len(out), max_output, "zstd")
    return out


def zstd_compress(data: bytes, level: int = 3) -> bytes:
    """A zstd frame (content size written), one reusable compressor per thread and level."""
    cache = getattr(_zstd_local, "cctx", None)
    if cache is None:
        cache = _zstd_local.cctx = {}
    c = cache.get(level)
    if c is None:
        c = cache[level] = zstandard.ZstdCompressor(level=level)
    return c.compress(data)


# -- lzma -------------------------------------------------------------------
#: liblzma memory limit: a stream header may declare a 1.5 GiB dictionary
LZMA_MEMLIMIT = 128 * 1024 * 1024


def lzma_decompress(data: bytes, max_output: int = DEFAULT_MAX_OUTPUT, fmt: int = lzma.FORMAT_AUTO) -> bytes:
    """Decode an xz / lzma-alone stream with a memory limit and an output cap."""
    d = lzma.LZMADecompressor(format=fmt, memlimit=LZMA_MEMLIMIT)
    try:
        out = d.decompress(data, max_length=max_output + 1)
    except (lzma.LZMAError, MemoryError) as e:
        raise DecodeError(f"lzma: {e}") from None
    _check_cap(len(out), max_output, "lzma")
    return out


def lzma_compress(data: bytes, level: int = 6, fmt: int = lzma.FORMAT_XZ, check: int = -1) -> bytes:
    """An xz (or raw/alone) stream; ``check=lzma.CHECK_NONE`` writes no integrity
    check, as MariaDB page compression and PerconaFT do (LZMA_CHECK_NONE)."""
    return lzma.compress(data, format=fmt, preset=level, check=check)


# -- bzip2 ------------------------------------------------------------------
def bzip2_decompress(data: bytes, max_output: int = DEFAULT_MAX_OUTPUT) -> bytes:
    d = bz2.BZ2Decompressor()
    try:
        out = d.decompress(data, max_length=max_output + 1)
    except (OSError, ValueError) as e:
        raise DecodeError(f"bzip2: {e}") from None
    _check_cap(len(out), max_output, "bzip2")
    return out


def bzip2_compress(data: bytes, level: int = 9) -> bytes:
    return bz2.compress(data, level)


# -- snappy (raw block format) ----------------------------------------------
def snappy_uncompressed_length(data: bytes) -> int:
    """The varint length that starts a raw snappy block."""
    result = shift = 0
    for i in range(min(len(data), 5)):
        b = data[i]
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result
        shift += 7
    raise DecodeError("snappy: bad length varint")


def snappy_decompress(data: bytes, max_output: int = DEFAULT_MAX_OUTPUT) -> bytes:
    _check_cap(snappy_uncompressed_length(data), max_output, "snappy")
    try:
        return bytes(cramjam.snappy.decompress_raw(data))
    except Exception as e:
        raise DecodeError(f"snappy: {e}") from None


def snappy_compress(data: bytes) -> bytes:
    return bytes(cramjam.snappy.compress_raw(data))


def snappy_compressed_size(data: bytes) -> int:
    """``len(snappy_compress(data))`` without building the bytes (per-thread buffer)."""
    return cramjam.snappy.compress_raw_into(data, _scratch_buffer(cramjam.snappy.compress_raw_max_len(data)))


# -- brotli -----------------------------------------------------------------
def brotli_compress(data: bytes, level: int = 11) -> bytes:
    return bytes(cramjam.brotli.compress(data, level=level))


#: first output buffer for a brotli stream of unknown decoded size: this many
#: times its compressed size (at least 64 KiB), doubled while it is too small
_BROTLI_FIRST_GUESS = 8


def brotli_decompress(data: bytes, max_output: int = DEFAULT_MAX_OUTPUT, size_hint: int | None = None) -> bytes:
    """Decode a brotli stream into a bounded buffer: never more than ``max_output`` bytes.

    cramjam's ``decompress_into`` writes into a buffer we allocate and fails
    ("failed to write whole buffer") as soon as the stream wants more room,
    without decoding the rest, so a bomb costs at most the buffer.  The buffer
    is ``size_hint + 1`` bytes when the caller knows the decoded size, else a
    guess doubled while too small; it is never larger than ``max_output + 1``
    (one byte more than the cap tells a stream that exactly fills the cap
    from one that goes over it).  Each retry decodes from the start (at most
    log2(cap / 64 KiB) retries); a corrupt or truncated stream fails at once."""
    limit = max_output + 1
    if size_hint is not None:
        _check_cap(size_hint, max_output, "brotli")
        size = min(size_hint + 1, limit)
    else:
        size = min(max(64 * 1024, _BROTLI_FIRST_GUESS * len(data)), limit)
    while True:
        buf = bytearray(size)
        try:
            n = cramjam.brotli.decompress_into(data, buf)
        except Exception as e:          # cramjam raises its own error types
            if "whole buffer" not in str(e):        # corrupt or truncated: no retry
                raise DecodeError(f"brotli: {e}") from None
            if size >= limit:
                raise DecodeError(f"brotli: decodes to more than the cap of {max_output} bytes") from None
            size = min(size * 2, limit)
            continue
        _check_cap(n, max_output, "brotli")
        return bytes(memoryview(buf)[:n])


def zstd_compress_dict(data: bytes, dict_data: bytes, level: int = 3) -> bytes:
    """A zstd frame written with a dictionary (content size written, as RocksDB's
    ZSTD_compress_usingCDict)."""
    return zstandard.ZstdCompressor(level=level, dict_data=_zstd_dict(dict_data)).compress(data)
