"""The CSV engine's meta file ``<table>.CSM`` (storage/csv/ha_tina.cc
read_meta_file / write_meta_file): META_BUFFER_SIZE = 35 bytes:
TINA_CHECK_HEADER (1 byte, 254), TINA_VERSION (1 byte, ha_tina.h: 1), rows
(8 bytes, int8store: little endian), check_point, auto_increment and
forced_flushes (3 x 8 bytes, written as zeros), dirty (1 byte: the table is
open for writing or crashed; the server repairs it at the next open).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

TINA_CHECK_HEADER = 254
TINA_VERSION = 1
META_BUFFER_SIZE = 1 + 1 + 8 + 8 + 8 + 8 + 1
_META = struct.Struct("<BBQQQQB")


class MetaError(ValueError):
    """The meta file cannot be read; ``offset`` is where it goes wrong."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class CsvMeta:
    """One ``.CSM`` file."""

    check_header: int
    version: int
    rows: int               # rows the engine recorded (share->rows_recorded): SHOW TABLE STATUS Rows
    check_point: int
    auto_increment: int
    forced_flushes: int
    dirty: bool             # crashed bit: read_meta_file refuses the table while it is set

    @property
    def header_ok(self) -> bool:
        return self.check_header == TINA_CHECK_HEADER


def read_meta(buf: bytes, offset: int = 0) -> CsvMeta:
    """Read the CSM record at ``offset`` (MetaError when the file is too short)."""
    if len(buf) - offset < META_BUFFER_SIZE:
        raise MetaError(f"meta file of {len(buf) - offset} bytes, {META_BUFFER_SIZE} expected", offset + len(buf))
    h, v, rows, cp, ai, ff, dirty = _META.unpack_from(buf, offset)
    return CsvMeta(h, v, rows, cp, ai, ff, bool(dirty))
