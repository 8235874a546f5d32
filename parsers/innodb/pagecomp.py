"""Page-level compression: MariaDB PAGE_COMPRESSED (the legacy layout with page
type 34354 and the full_crc32 layout) and MySQL transparent page compression
(page type 14, ``COMPRESSION='zlib'|'lz4'``).

Layouts, from the engines' sources:

* MariaDB full_crc32 (``fil/fil0pagecompress.cc``
  fil_page_compress_for_full_crc32 / fil_page_decompress_for_full_crc32):
  the first FIL_PAGE_COMP_ALGO (26) bytes of the page are kept, the whole
  page is compressed behind them; FIL_PAGE_TYPE becomes
  ``1 << FIL_PAGE_COMPRESS_FCRC32_MARKER | stored_bytes >> 8``
  (stored_bytes a multiple of 256 including the 4-byte crc32 at its end);
  for lz4, lzo and snappy the byte at ``stored_bytes - 5`` holds the low 8
  bits of ``26 + payload + 5`` so the exact payload length is known; the
  algorithm is in the FSP flags.
* MariaDB legacy (fil_page_compress_for_non_full_crc32): FIL header kept,
  checksum field = BUF_NO_CHECKSUM_MAGIC, FIL_PAGE_TYPE = 34354, the
  algorithm in the 8 bytes at FIL_PAGE_COMP_ALGO (26), the payload length
  in 2 bytes at FIL_PAGE_DATA + FIL_PAGE_COMP_SIZE (38); payload from 40
  (42 with FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED, algorithm then at 40).
* MySQL (``os/file.h`` Compression::meta_t, ``os/os0file.cc``
  Compression::deserialize_header): at FIL_PAGE_VERSION (26): version(1),
  algorithm(1: zlib, 2: lz4), original type(2), original size(2),
  compressed size(2); the payload starts at FIL_PAGE_DATA (38) and decodes
  to the original page from byte 38 on.
"""
from __future__ import annotations

import bz2
import lzma
import zlib
from dataclasses import dataclass

from ..codecs import general
from ..codecs.general import DecodeError
from .fil import (BUF_NO_CHECKSUM_MAGIC, FIL_PAGE_COMPRESS_SIZE_V1, FIL_PAGE_DATA,
                  FIL_PAGE_ORIGINAL_SIZE_V1, FIL_PAGE_ORIGINAL_TYPE_V1, FIL_PAGE_PAGE_COMPRESSED,
                  FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED, FIL_PAGE_TYPE, FIL_PAGE_VERSION)
from .fsp import MARIADB_ALGORITHMS, MYSQL_ALGORITHMS

FIL_PAGE_COMP_ALGO = 26              # fil0pagecompress.h (= FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION)
FIL_PAGE_COMP_SIZE = 0               # relative to FIL_PAGE_DATA
FIL_PAGE_COMP_METADATA_LEN = 2
FIL_PAGE_ENCRYPT_COMP_ALGO = 2       # relative to FIL_PAGE_DATA
FIL_PAGE_ENCRYPT_COMP_METADATA_LEN = 4

#: liblzma memory limit: MariaDB's presets 1..9 need at most ~65 MiB (64 MiB
#: dictionary at preset 9); a header declaring more is refused, not allocated
LZMA_MEMLIMIT = 96 << 20

#: algorithms whose full_crc32 pages carry the exact payload length byte
FCRC32_LEN_BYTE_ALGOS = ("lz4", "lzo", "snappy")


class PageDecodeError(Exception):
    """A compressed page could not be decoded; the message says why."""


@dataclass
class Fcrc32CompHeader:
    """What the FIL header of a MariaDB full_crc32 page_compressed page says."""

    stored_bytes: int            # multiple of 256, includes header and checksum
    payload_len: int | None      # exact, when the algorithm stores the length byte
    header_len: int = FIL_PAGE_COMP_ALGO


@dataclass
class LegacyCompHeader:
    """Header of a MariaDB pre-full_crc32 page_compressed page (type 34354/37401)."""

    algorithm_id: int
    payload_len: int
    header_len: int
    encrypted: bool
    checksum_is_magic: bool

    @property
    def algorithm(self) -> str:
        return MARIADB_ALGORITHMS.get(self.algorithm_id, f"algorithm {self.algorithm_id}")


@dataclass
class MysqlCompMeta:
    """MySQL Compression::meta_t of a FIL_PAGE_COMPRESSED (14) page."""

    version: int
    algorithm_id: int
    original_type: int
    original_size: int
    compressed_size: int

    @property
    def algorithm(self) -> str:
        return MYSQL_ALGORITHMS.get(self.algorithm_id, f"algorithm {self.algorithm_id}")


def parse_fcrc32_comp_header(buf: bytes, offset: int, page_size: int, algorithm: str) -> Fcrc32CompHeader:
    """Read the full_crc32 page_compressed size fields of the page at ``offset``."""
    ptype = int.from_bytes(buf[offset + FIL_PAGE_TYPE:offset + FIL_PAGE_TYPE + 2], "big")
    if not ptype & 0x8000:
        raise PageDecodeError(f"page type 0x{ptype:04x} is not a full_crc32 page_compressed page")
    if ptype & 0x7F00:
        raise PageDecodeError(f"reserved bits set in page type 0x{ptype:04x}")
    stored = (ptype & 0xFF) << 8
    if stored == 0 or stored >= page_size:
        raise PageDecodeError(f"compressed size {stored} out of range for a {page_size}-byte page")
    payload = None
    if algorithm in FCRC32_LEN_BYTE_ALGOS:
        size = stored
        lsb = buf[offset + size - 5]
        if lsb:
            size += lsb - 0x100
        size -= 5
        payload = size - FIL_PAGE_COMP_ALGO
        if payload <= 0:
            raise PageDecodeError(f"payload length {payload} from the length byte is not positive")
    return Fcrc32CompHeader(stored, payload)


def parse_legacy_comp_header(buf: bytes, offset: int, page_size: int) -> LegacyCompHeader:
    """Read the header of a MariaDB legacy page_compressed page (34354 / 37401)."""
    o = offset
    ptype = int.from_bytes(buf[o + FIL_PAGE_TYPE:o + FIL_PAGE_TYPE + 2], "big")
    magic = int.from_bytes(buf[o:o + 4], "big") == BUF_NO_CHECKSUM_MAGIC
    if ptype == FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED:
        header_len = FIL_PAGE_DATA + FIL_PAGE_ENCRYPT_COMP_METADATA_LEN
        algo = int.from_bytes(buf[o + FIL_PAGE_DATA + FIL_PAGE_ENCRYPT_COMP_ALGO:
                                  o + FIL_PAGE_DATA + FIL_PAGE_ENCRYPT_COMP_ALGO + 2], "big")
        encrypted = True
    elif ptype == FIL_PAGE_PAGE_COMPRESSED:
        header_len = FIL_PAGE_DATA + FIL_PAGE_COMP_METADATA_LEN
        if int.from_bytes(buf[o + FIL_PAGE_COMP_ALGO:o + FIL_PAGE_COMP_ALGO + 6], "big"):
            raise PageDecodeError("high bytes of the compression algorithm field are not zero")
        algo = int.from_bytes(buf[o + FIL_PAGE_COMP_ALGO + 6:o + FIL_PAGE_COMP_ALGO + 8], "big")
        encrypted = False
    else:
        raise PageDecodeError(f"page type {ptype} is not a legacy page_compressed page")
    size = int.from_bytes(buf[o + FIL_PAGE_DATA + FIL_PAGE_COMP_SIZE:o + FIL_PAGE_DATA + FIL_PAGE_COMP_SIZE + 2], "big")
    if size == 0 or size > page_size - header_len:
        raise PageDecodeError(f"payload length {size} out of range for a {page_size}-byte page")
    return LegacyCompHeader(algo, size, header_len, encrypted, magic)


def parse_mysql_comp_meta(buf: bytes, offset: int) -> MysqlCompMeta:
    """Read MySQL's Compression::meta_t at FIL_PAGE_VERSION of the page at ``offset``."""
    o = offset
    return MysqlCompMeta(
        version=buf[o + FIL_PAGE_VERSION], algorithm_id=buf[o + FIL_PAGE_VERSION + 1],
        original_type=int.from_bytes(buf[o + FIL_PAGE_ORIGINAL_TYPE_V1:o + FIL_PAGE_ORIGINAL_TYPE_V1 + 2], "big"),
        original_size=int.from_bytes(buf[o + FIL_PAGE_ORIGINAL_SIZE_V1:o + FIL_PAGE_ORIGINAL_SIZE_V1 + 2], "big"),
        compressed_size=int.from_bytes(buf[o + FIL_PAGE_COMPRESS_SIZE_V1:o + FIL_PAGE_COMPRESS_SIZE_V1 + 2], "big"))


# -- decoding -------------------------------------------------------------------
def _stream_zlib(data: bytes, out_size: int) -> tuple[bytes, int]:
    d = zlib.decompressobj()
    try:
        out = d.decompress(data, out_size + 1)
    except zlib.error as e:
        raise PageDecodeError(f"zlib: {e}") from None
    if not d.eof:
        raise PageDecodeError(f"zlib: stream does not end within the page (decoded {len(out)} bytes)")
    return out, len(data) - len(d.unused_data)


def _stream_lzma(data: bytes, out_size: int) -> tuple[bytes, int]:
    d = lzma.LZMADecompressor(format=lzma.FORMAT_AUTO, memlimit=LZMA_MEMLIMIT)
    try:
        out = d.decompress(data, max_length=out_size + 1)
    except (lzma.LZMAError, MemoryError) as e:
        raise PageDecodeError(f"lzma: {e}") from None
    if not d.eof:
        raise PageDecodeError(f"lzma: stream does not end within the page (decoded {len(out)} bytes)")
    return out, len(data) - len(d.unused_data)


def _stream_bzip2(data: bytes, out_size: int) -> tuple[bytes, int]:
    d = bz2.BZ2Decompressor()
    try:
        out = d.decompress(data, max_length=out_size + 1)
    except (OSError, ValueError) as e:
        raise PageDecodeError(f"bzip2: {e}") from None
    if not d.eof:
        raise PageDecodeError(f"bzip2: stream does not end within the page (decoded {len(out)} bytes)")
    return out, len(data) - len(d.unused_data)


def _lzo(data: bytes, out_size: int, prefix: int | None = None) -> bytes:
    try:
        from .lzo import lzo1x_decompress_safe
    except ImportError:
        raise PageDecodeError("lzo: not decoded") from None
    try:
        return lzo1x_decompress_safe(data, out_size, stop_at=prefix)
    except ValueError as e:
        raise PageDecodeError(f"lzo: {e}") from None


def decode_payload(algorithm: str, data: bytes, out_size: int, exact_len: int | None,
                   prefix: int | None = None) -> tuple[bytes, int]:
    """Decode one compressed page payload to ``out_size`` bytes.

    ``exact_len`` is the payload length when the page states it; otherwise the
    codec finds the stream end.  Returns (decoded bytes, payload length).
    Never produces more than ``out_size`` bytes.  With ``prefix`` (only
    honoured where the codec can stop early: zlib, lzma, bzip2 without a stated length,
    and the pure-Python lzo where the payload length is known), just the first ``prefix``
    bytes are decoded.
    """
    if exact_len is not None:
        if exact_len > len(data):
            raise PageDecodeError(f"payload length {exact_len} runs past the page ({len(data)} bytes left)")
        data = data[:exact_len]
    if prefix is not None and (algorithm in ("zlib", "lzma") or (algorithm == "bzip2" and exact_len is None)):
        # headers only: stop after ``prefix`` bytes; the stream length is then
        # taken from the zero fill the engine writes behind it (see zero_trimmed_length),
        # exact for lzma (the .xz footer) and bzip2 (its end-of-stream marker and CRC:
        # bzip2_stream_end); bzip2 where no length is stated (full_crc32 pages)
        try:
            if algorithm == "zlib":
                out = zlib.decompressobj().decompress(data, prefix)
            elif algorithm == "bzip2":
                out = bz2.BZ2Decompressor().decompress(data, max_length=prefix)
            else:
                out = lzma.LZMADecompressor(format=lzma.FORMAT_AUTO, memlimit=LZMA_MEMLIMIT).decompress(
                    data, max_length=prefix)
        except (zlib.error, lzma.LZMAError, MemoryError, OSError, ValueError) as e:
            raise PageDecodeError(f"{algorithm}: {e}") from None
        if len(out) < prefix:
            raise PageDecodeError(f"{algorithm}: only {len(out)} bytes decode")
        if exact_len is not None:
            return out, exact_len
        if algorithm == "bzip2":
            end = bzip2_stream_end(data)
            # not a one-block stream ending in its marker: only the full decode knows its length
            return out, end if end is not None else _stream_bzip2(data, out_size)[1]
        used = zero_trimmed_length(data)
        if algorithm == "lzma" and data[used - 2:used] != XZ_FOOTER_MAGIC:
            # not an .xz stream ending in its footer: only the full decode knows its length
            return out, _stream_lzma(data, out_size)[1]
        return out, used
    try:
        if algorithm == "zlib":
            out, used = _stream_zlib(data, out_size)
        elif algorithm == "lzma":
            out, used = _stream_lzma(data, out_size)
        elif algorithm == "bzip2":
            out, used = _stream_bzip2(data, out_size)
        elif algorithm == "lz4":
            out = general.lz4_block_decompress(data, out_size, max_output=out_size)
            used = len(data)
        elif algorithm == "snappy":
            out = general.snappy_decompress(data, max_output=out_size)
            used = len(data)
        elif algorithm == "lzo":
            if prefix is not None and exact_len is not None:
                return _lzo(data, out_size, prefix), exact_len
            out = _lzo(data, out_size)
            used = len(data)
        else:
            raise PageDecodeError(f"unknown compression algorithm {algorithm!r}")
    except DecodeError as e:
        raise PageDecodeError(str(e)) from None
    if len(out) != out_size:
        raise PageDecodeError(f"{algorithm}: decoded {len(out)} bytes, expected {out_size}")
    if exact_len is not None:
        used = exact_len
    return out, used


#: the last two bytes of an .xz stream footer (xz-file-format.txt 2.1.2.4, "YZ");
#: MariaDB's lzma pages are .xz streams (lzma_easy_buffer_encode in fil_page_compress),
#: so their zero-trimmed length is exact: the stream never ends in a zero byte
XZ_FOOTER_MAGIC = b"YZ"


#: bzip2's stream header ("BZh" and the block size digit), a block's magic (the BCD digits of
#: pi) and the end-of-stream magic (of sqrt(pi)), as bzip2's compress.c writes them
#: (BZ2_compressBlock: 0x314159265359 before each block, 0x177245385090 and the combined
#: CRC after the last, then zero bits to a byte)
BZ_HDR = b"BZh"
BZ_BLOCK_MAGIC = bytes.fromhex("314159265359")
BZ_EOS_MAGIC = 0x177245385090


def bzip2_stream_end(data: bytes) -> int | None:
    """The exact length of a one-block bzip2 stream, found from its tail without
    decoding it: the end-of-stream magic, then the combined CRC, which for one block is
    the block's own CRC (bytes 10..13: the first block starts byte-aligned behind the
    4-byte header), then zero bits to the byte.  ``data`` is laid out as the page holds
    it: the stream, the zero fill, the page's 4-byte checksum (zero_trimmed_length).
    The stream ends at or a few bytes after its zero-trimmed length (the CRC may end in
    zero bytes), so only those few ends are tried; 80 bits must match.  None when the stream is not such (several blocks, or no
    marker there): only a full decode knows its end then.  A page of up to 64 KiB is
    one block (MariaDB's fil_page_compress: BZ2_bzBuffToBuffCompress, 100k blocks)."""
    if len(data) < 14 + 10 or data[:3] != BZ_HDR or data[4:10] != BZ_BLOCK_MAGIC:
        return None
    want = (BZ_EOS_MAGIC << 32) | int.from_bytes(data[10:14], "big")
    mask = (1 << 80) - 1
    trimmed = zero_trimmed_length(data)     # the page's 4-byte checksum after the zero fill is left out
    for end in range(max(trimmed, 24), min(len(data), trimmed + 9) + 1):
        tail = int.from_bytes(data[end - 11:end], "big")
        for pad in range(8):
            if (tail >> pad) & mask == want and not tail & ((1 << pad) - 1):
                return end
    return None


def zero_trimmed_length(data: bytes) -> int:
    """Payload length as the zero fill behind the stream shows it: MariaDB
    clears everything between the stream end and the 4-byte checksum
    (fil_page_compress_for_full_crc32).  Exact unless the stream itself ends
    in zero bytes (zlib's Adler-32 may; an .xz footer never does); the exact
    length then needs the full decode."""
    body = data[:-4] if len(data) > 4 else data
    return len(body.rstrip(b"\0"))


@dataclass
class DecodedPage:
    """A compressed page after decoding: the logical page and what it cost on disk."""

    page: bytes                 # the logical (uncompressed) page
    payload_len: int            # compressed payload bytes
    stored_bytes: int           # bytes the page occupies before hole punching
    algorithm: str
    original_type: int
    header_len: int


def decode_fcrc32_page(raw: bytes, page_size: int, algorithm: str, prefix: int | None = None,
                       hdr: Fcrc32CompHeader | None = None) -> DecodedPage:
    """Decode a MariaDB full_crc32 page_compressed page (whole page in ``raw``);
    ``prefix`` may limit the work to the first bytes (see decode_payload); ``hdr`` is the
    page's header when the caller has read it already."""
    if hdr is None:
        hdr = parse_fcrc32_comp_header(raw, 0, page_size, algorithm)
    data = raw[hdr.header_len:hdr.stored_bytes]
    page, used = decode_payload(algorithm, data, page_size, hdr.payload_len, prefix)
    return DecodedPage(page, used, hdr.stored_bytes, algorithm,
                       int.from_bytes(page[FIL_PAGE_TYPE:FIL_PAGE_TYPE + 2], "big"), hdr.header_len)


def decode_legacy_page(raw: bytes, page_size: int, prefix: int | None = None,
                       decrypted: bool = False, hdr: LegacyCompHeader | None = None) -> DecodedPage:
    """Decode a MariaDB legacy page_compressed page (type 34354); the payload
    length is in the header, so ``prefix`` may limit the work to the headers.

    A FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED (37401) page decodes once ``decrypted``:
    fil0crypt.cc fil_space_decrypt_for_non_full_checksum decrypts only the payload
    behind the FIL_PAGE_DATA + FIL_PAGE_ENCRYPT_COMP_METADATA_LEN header and leaves
    the type 37401, which fil0pagecompress.cc fil_page_decompress_for_non_full_crc32
    then decompresses (algorithm at FIL_PAGE_DATA + FIL_PAGE_ENCRYPT_COMP_ALGO).
    ``raw`` needs only the header and payload; ``hdr`` is the header when the caller has
    read it already."""
    if hdr is None:
        hdr = parse_legacy_comp_header(raw, 0, page_size)
    if hdr.encrypted and not decrypted:
        raise PageDecodeError("page_compressed and encrypted: not decrypted")
    data = raw[hdr.header_len:hdr.header_len + hdr.payload_len]
    page, used = decode_payload(hdr.algorithm, data, page_size, hdr.payload_len, prefix)
    return DecodedPage(page, used, hdr.header_len + hdr.payload_len, hdr.algorithm,
                       int.from_bytes(page[FIL_PAGE_TYPE:FIL_PAGE_TYPE + 2], "big"), hdr.header_len)


def decode_mysql_page(raw: bytes, page_size: int, prefix: int | None = None) -> DecodedPage:
    """Decode a MySQL FIL_PAGE_COMPRESSED (14) page back to the original page; with
    ``prefix``, only its first ``prefix`` bytes where the codec can stop early (zlib:
    the payload length is in the meta data)."""
    meta = parse_mysql_comp_meta(raw, 0)
    if meta.original_size != page_size - FIL_PAGE_DATA:
        raise PageDecodeError(f"original size {meta.original_size} is not page size - {FIL_PAGE_DATA}")
    if meta.compressed_size == 0 or meta.compressed_size > page_size - FIL_PAGE_DATA:
        raise PageDecodeError(f"compressed size {meta.compressed_size} out of range")
    data = raw[FIL_PAGE_DATA:FIL_PAGE_DATA + meta.compressed_size]
    body, used = decode_payload(meta.algorithm, data, meta.original_size, meta.compressed_size,
                                None if prefix is None else max(1, prefix - FIL_PAGE_DATA))
    header = bytearray(raw[:FIL_PAGE_DATA])
    header[FIL_PAGE_TYPE:FIL_PAGE_TYPE + 2] = meta.original_type.to_bytes(2, "big")
    # the original page kept its FIL header except the compression meta data
    header[FIL_PAGE_VERSION:FIL_PAGE_DATA - 4] = bytes(FIL_PAGE_DATA - 4 - FIL_PAGE_VERSION)
    return DecodedPage(bytes(header) + body, used, FIL_PAGE_DATA + meta.compressed_size, meta.algorithm,
                       meta.original_type, FIL_PAGE_DATA)


def build_mysql_compressed_page(original: bytes, algorithm_id: int = 1, version: int = 1) -> bytes:
    """Build a MySQL type-14 page from an uncompressed page following the
    meta_t layout (used by tests; MySQL itself writes these)."""
    page_size = len(original)
    body = original[FIL_PAGE_DATA:]
    if algorithm_id == 1:
        comp = zlib.compress(body, 6)
    elif algorithm_id == 2:
        comp = general.lz4_block_compress(body)
    else:
        raise ValueError("algorithm must be 1 (zlib) or 2 (lz4)")
    out = bytearray(page_size)
    out[:FIL_PAGE_DATA] = original[:FIL_PAGE_DATA]
    out[FIL_PAGE_TYPE:FIL_PAGE_TYPE + 2] = (14).to_bytes(2, "big")
    out[FIL_PAGE_VERSION] = version
    out[FIL_PAGE_VERSION + 1] = algorithm_id
    out[FIL_PAGE_ORIGINAL_TYPE_V1:FIL_PAGE_ORIGINAL_TYPE_V1 + 2] = original[FIL_PAGE_TYPE:FIL_PAGE_TYPE + 2]
    out[FIL_PAGE_ORIGINAL_SIZE_V1:FIL_PAGE_ORIGINAL_SIZE_V1 + 2] = len(body).to_bytes(2, "big")
    out[FIL_PAGE_COMPRESS_SIZE_V1:FIL_PAGE_COMPRESS_SIZE_V1 + 2] = len(comp).to_bytes(2, "big")
    out[FIL_PAGE_DATA:FIL_PAGE_DATA + len(comp)] = comp
    return bytes(out)
