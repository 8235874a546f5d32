"""The azio header of an ``.ARZ`` file (MariaDB/server storage/archive/azlib.h,
azio.c write_header / read_header): AZHEADER_SIZE (29) + AZMETA_BUFFER_SIZE (49)
bytes at offset 0, little endian (int4store / int8store):

=====================  ===  ==========================================================
AZ_MAGIC_POS             0  0xfe (az_magic[0]; az_magic[1] = 0x03 is also the version)
AZ_VERSION_POS           1  3 (ha_archive.cc ARCHIVE_VERSION)
AZ_MINOR_VERSION_POS     2  1
AZ_BLOCK_POS             3  block size / 1024 (AZ_BUFSIZE_WRITE = 16384 -> 16)
AZ_STRATEGY_POS          4  Z_DEFAULT_STRATEGY (0)
AZ_FRM_POS               5  u4 offset of the table's .frm copy (azwrite_frm)
AZ_FRM_LENGTH_POS        9  u4 its length
AZ_META_POS             13  u4 (written 0)
AZ_META_LENGTH_POS      17  u4 (written 0)
AZ_START_POS            21  u8 where the compressed data begin
AZ_ROW_POS              29  u8 rows written
AZ_FLUSH_POS            37  u8 forced flushes
AZ_CHECK_POS            45  u8 check point (file length at the last flush)
AZ_AUTOINCREMENT_POS    53  u8 auto_increment
AZ_LONGEST_POS          61  u4 longest row (azwrite length: row header included)
AZ_SHORTEST_POS         65  u4 shortest row
AZ_COMMENT_POS          69  u4 offset of the comment block
AZ_COMMENT_LENGTH_POS   73  u4 its length
AZ_DIRTY_POS            77  AZ_STATE_CLEAN 0 / DIRTY 1 / SAVED 2 / CRASHED 3
=====================  ===  ==========================================================

A gzip file (magic 1f 8b) is the engine's version 2 format; anything else the
engine calls an unknown version (Z_VERSION_ERROR).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, replace

AZHEADER_SIZE = 29
AZMETA_BUFFER_SIZE = 8 + 8 + 8 + 8 + 4 + 4 + 4 + 4 + 1
AZ_HEADER_BYTES = AZHEADER_SIZE + AZMETA_BUFFER_SIZE          # 78
AZ_MAGIC = b"\xfe\x03"                                       # az_magic[0..1]
GZ_MAGIC = b"\x1f\x8b"
AZ_BUFSIZE_READ = 32768
AZ_BUFSIZE_WRITE = 16384

AZ_STATE_CLEAN, AZ_STATE_DIRTY, AZ_STATE_SAVED, AZ_STATE_CRASHED = 0, 1, 2, 3
DIRTY_NAMES = {AZ_STATE_CLEAN: "clean", AZ_STATE_DIRTY: "dirty", AZ_STATE_SAVED: "saved",
               AZ_STATE_CRASHED: "crashed"}

_HEAD = struct.Struct("<BBBBB IIII QQQQQ II II B")
assert _HEAD.size == AZ_HEADER_BYTES


class HeaderError(ValueError):
    """The azio header cannot be read; ``offset`` is where it goes wrong."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class AzHeader:
    """The 78-byte azio header."""

    magic: int
    version: int
    minor_version: int
    block_size: int            # bytes (AZ_BLOCK_POS x 1024)
    strategy: int
    frm_start_pos: int
    frm_length: int
    meta_pos: int
    meta_length: int
    start: int                 # first byte of the compressed data
    rows: int
    forced_flushes: int
    check_point: int
    auto_increment: int
    longest_row: int
    shortest_row: int
    comment_start_pos: int
    comment_length: int
    dirty: int

    @property
    def state(self) -> str:
        return DIRTY_NAMES.get(self.dirty, f"unknown ({self.dirty})")


def read_header(buf: bytes, file_size: int) -> AzHeader:
    """The header at the start of ``buf`` (HeaderError naming the offset when it is
    short, not an azio file, or points outside a file of ``file_size`` bytes)."""
    if buf[:2] == GZ_MAGIC:
        raise HeaderError("gzip magic 1f 8b: ARCHIVE version 2 (pre-5.1) data file, not read", 0)
    if len(buf) < 2 or buf[:2] != AZ_MAGIC:
        raise HeaderError(f"magic {buf[:2].hex(' ') or '(none)'} is not the azio magic fe 03 "
                          f"(the engine says: unknown version)", 0)
    if len(buf) < AZ_HEADER_BYTES:
        raise HeaderError(f"azio header cut short: {len(buf)} of {AZ_HEADER_BYTES} bytes", len(buf))
    h = AzHeader(*_HEAD.unpack_from(buf, 0))
    h = replace(h, block_size=1024 * h.block_size)
    if not AZ_HEADER_BYTES <= h.start <= file_size:
        raise HeaderError(f"data start {h.start} outside the file ({file_size} bytes)", 21)
    if h.frm_length and h.frm_start_pos + h.frm_length > file_size:
        raise HeaderError(f".frm copy [{h.frm_start_pos}, +{h.frm_length}) past the end of the file", 5)
    if h.comment_length and h.comment_start_pos + h.comment_length > file_size:
        raise HeaderError(f"comment [{h.comment_start_pos}, +{h.comment_length}) past the end of the file", 69)
    return h
