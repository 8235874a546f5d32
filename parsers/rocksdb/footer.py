"""The SST footer and block handles (RocksDB table/format.h, table/format.cc:
``Footer::DecodeFrom``, ``BlockHandle::DecodeFrom``).

Three layouts, told apart by the magic number and the format version:

* legacy (format_version 0, ``kLegacyBlockBasedTableMagicNumber``): 48 bytes,
  metaindex and index handles (varints, zero-padded to 40 bytes), magic;
* format_version 1-5: 53 bytes, checksum type, the handles padded to 40 bytes,
  format_version (fixed32), magic;
* format_version 6+: 53 bytes, checksum type, ``kExtendedMagic`` (3e 00 7a 00),
  the footer's own checksum, the base context checksum, the metaindex size
  (the metaindex block ends just before the footer; the index handle is in the
  metaindex as ``rocksdb.index``), 24 reserved bytes, format_version, magic.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import NamedTuple

from .coding import CodingError, varint
from .magic import (kBlockBasedTableMagicNumber, kCuckooTableMagicNumber, kLegacyBlockBasedTableMagicNumber,
                    kLegacyPlainTableMagicNumber, kPlainTableMagicNumber)
#: format.h: Footer::kVersion0EncodedLength, kNewVersionsEncodedLength
kVersion0EncodedLength = 48
kNewVersionsEncodedLength = 53
#: format.cc kExtendedMagic (format_version >= 6)
kExtendedMagic = b"\x3e\x00\x7a\x00"
#: format.h kBlockTrailerSize: compression type (1 byte) + checksum (4 bytes)
kBlockTrailerSize = 5
#: the newest format_version this reader knows (RocksDB 9.x writes up to 6, 10.x 7)
MAX_FORMAT_VERSION = 7
#: include/rocksdb/table.h ChecksumType
CHECKSUM_TYPES = {0: "none", 1: "crc32c", 2: "xxhash", 3: "xxhash64", 4: "xxh3"}
OTHER_MAGICS = {kPlainTableMagicNumber: "plain table", kLegacyPlainTableMagicNumber: "plain table (legacy)",
                kCuckooTableMagicNumber: "cuckoo table"}


class FooterError(Exception):
    def __init__(self, message: str, offset: int):
        self.offset = offset
        super().__init__(message)


class BlockHandle(NamedTuple):
    """Where a block is: offset and size of its contents (the 5-byte trailer follows).
    A named tuple: an SST's handles are made by the thousand."""

    offset: int
    size: int

    @property
    def end(self) -> int:
        """First byte after the block and its trailer."""
        return self.offset + self.size + kBlockTrailerSize


def decode_handle(buf, pos: int, limit: int | None = None) -> tuple[BlockHandle, int]:
    """BlockHandle::DecodeFrom: varint64 offset, varint64 size."""
    off, p = varint(buf, pos, limit)
    size, p = varint(buf, p, limit)
    return BlockHandle(off, size), p


@dataclass(frozen=True)
class Footer:
    format_version: int
    checksum_type: int
    magic: int
    metaindex: BlockHandle
    index: BlockHandle | None        # None for format_version >= 6 (it is in the metaindex)
    footer_offset: int               # file offset of the footer
    footer_checksum: int = 0         # format_version >= 6
    base_context_checksum: int = 0   # format_version >= 6

    @property
    def checksum_name(self) -> str:
        return CHECKSUM_TYPES.get(self.checksum_type, f"unknown({self.checksum_type})")

    @property
    def length(self) -> int:
        return kVersion0EncodedLength if self.magic == kLegacyBlockBasedTableMagicNumber else kNewVersionsEncodedLength


def read_footer(tail: bytes, file_size: int) -> Footer:
    """The footer from the file's last bytes (``tail``: at least the last 53, or the whole
    file when shorter); offsets in errors are file offsets."""
    if file_size < kVersion0EncodedLength or len(tail) < kVersion0EncodedLength:
        raise FooterError(f"file of {file_size} bytes is shorter than an SST footer (48 bytes)", 0)
    magic = struct.unpack_from("<Q", tail, len(tail) - 8)[0]
    magic_at = file_size - 8
    if magic == kLegacyBlockBasedTableMagicNumber:
        start = len(tail) - kVersion0EncodedLength
        foff = file_size - kVersion0EncodedLength
        try:
            meta, p = decode_handle(tail, start, start + 40)
            idx, _ = decode_handle(tail, p, start + 40)
        except CodingError as e:
            raise FooterError(f"footer block handle: {e}", foff + (e.offset - start)) from None
        return Footer(0, 1, magic, meta, idx, foff)
    if magic != kBlockBasedTableMagicNumber:
        other = OTHER_MAGICS.get(magic)
        what = f"a RocksDB {other}, not a block-based table" if other else "not an SST footer"
        raise FooterError(f"bad magic number {magic:016x} ({what})", magic_at)
    if file_size < kNewVersionsEncodedLength or len(tail) < kNewVersionsEncodedLength:
        raise FooterError(f"file of {file_size} bytes is shorter than a 53-byte footer", 0)
    start = len(tail) - kNewVersionsEncodedLength
    foff = file_size - kNewVersionsEncodedLength
    checksum_type = tail[start]
    version = struct.unpack_from("<I", tail, len(tail) - 12)[0]
    if version < 1 or version > MAX_FORMAT_VERSION:
        raise FooterError(f"unknown format_version {version} (this reader knows 0-{MAX_FORMAT_VERSION})",
                          file_size - 12)
    if checksum_type not in CHECKSUM_TYPES:
        raise FooterError(f"unknown checksum type {checksum_type}", foff)
    part2 = start + 1
    if version >= 6:
        if bytes(tail[part2:part2 + 4]) != kExtendedMagic:
            raise FooterError(f"format_version {version} footer without its extended magic "
                              f"(got {bytes(tail[part2:part2 + 4]).hex()})", foff + 1)
        fchk, base_ctx, meta_size = struct.unpack_from("<III", tail, part2 + 4)
        if meta_size + kBlockTrailerSize > foff:
            raise FooterError(f"metaindex size {meta_size} runs before the file's start", foff + 13)
        meta = BlockHandle(foff - meta_size - kBlockTrailerSize, meta_size)
        return Footer(version, checksum_type, magic, meta, None, foff, fchk, base_ctx)
    try:
        meta, p = decode_handle(tail, part2, part2 + 40)
        idx, _ = decode_handle(tail, p, part2 + 40)
    except CodingError as e:
        raise FooterError(f"footer block handle: {e}", foff + (e.offset - start)) from None
    return Footer(version, checksum_type, magic, meta, idx, foff)
