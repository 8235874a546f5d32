"""One row of an Aria BLOCK_RECORD (ROW_FORMAT=PAGE) data file, and the column definitions
it is read with, as storage/maria/ma_blockrec.c ``write_block_record`` writes a row's head
and ``_ma_read_block_record2`` reads it back; the column definitions as ma_open.c
``_ma_columndef_read`` reads them from the ``.MAI`` (MARIA_COLUMNDEF_SIZE 20 bytes each, big
endian: column_nr, offset, type, length, fill_length, null_pos, empty_pos, null_bit, empty_bit,
the offset's high 16 bits, 2 unused), then each column's u2 number: the last
``fields * (MARIA_COLUMNDEF_SIZE + 2)`` bytes of the header (ma_create.c ``info_length``), in
the order the rows store them (ma_create.c ``compare_columns``: fixed NOT NULL columns first,
then the others, blobs last).

A row's head, at its directory entry's offset on a HEAD page:

* the flag byte (ROW_FLAG_TRANSID 1: a 6-byte transaction id follows; ROW_FLAG_VER_PTR 2: 7
  bytes; ROW_FLAG_DELETE_TRANSID 4: 6 bytes; ROW_FLAG_NULLS_EXTENDED 8: one byte; ROW_FLAG_EXTENTS
  128: the row goes on in other pages, its extents follow);
* the length of the field-length data (``store_key_length_inc``: 1 byte, or 255 and 2 bytes)
  when the table has variable-length columns (``base.max_field_lengths``); a checksum byte with
  HA_OPTION_CHECKSUM;
* the null bytes (``base.null_bytes``, the record's), the empty bits (``base.pack_bytes``: a
  bit per column whose value is empty: zero, all spaces, "");
* the fixed NOT NULL columns (``base.fixed_not_null_fields``) at their length;
* the field-length data: per CHAR (FIELD_SKIP_ENDSPACE: trailing spaces dropped), VARCHAR and
  BLOB that is neither NULL nor empty, its length in 1 or 2 bytes (a column of at most 255,
  VARCHAR 256, bytes: 1) or a blob's length bytes;
* the other columns that are neither NULL nor empty, in column order, each at its length
  (FIELD_NORMAL, FIELD_SKIP_ZERO, FIELD_SKIP_PRESPACE) or its stored length; the blobs.

A row with ROW_FLAG_EXTENTS (longer than the room on its page, or a blob that did not fit)
is not read here (:class:`BlockRowError`).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ..myisam.state import HeaderError
from .state import MaiHeader

MARIA_COLUMNDEF_SIZE = 20
#: ma_blockrec.h flag bits of a row's first byte
ROW_FLAG_TRANSID, ROW_FLAG_VER_PTR, ROW_FLAG_DELETE_TRANSID = 1, 2, 4
ROW_FLAG_NULLS_EXTENDED, ROW_FLAG_EXTENTS = 8, 128
TRANSID_SIZE, VERPTR_SIZE = 6, 7
#: include/my_base.h
HA_OPTION_CHECKSUM = 32
PORTABLE_SIZEOF_CHAR_PTR = 8
#: include/maria.h enum en_fieldtype
FIELD_NORMAL, FIELD_SKIP_ENDSPACE, FIELD_SKIP_PRESPACE, FIELD_SKIP_ZERO = 0, 1, 2, 3
FIELD_BLOB, FIELD_CONSTANT, FIELD_INTERVALL, FIELD_ZERO, FIELD_VARCHAR, FIELD_CHECK = 4, 5, 6, 7, 8, 9
FIXED_TYPES = (FIELD_NORMAL, FIELD_SKIP_PRESPACE, FIELD_SKIP_ZERO, FIELD_CHECK, FIELD_ZERO)


class BlockRowError(ValueError):
    """A row or column definition that cannot be read; ``offset`` is where it goes wrong (in the
    .MAI for a column definition, in the page for a row)."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class ColumnDef:
    """A MARIA_COLUMNDEF: where a column is in the record and how a row stores it."""

    column_nr: int
    offset: int                       # in the record
    type: int                         # en_fieldtype
    length: int                       # bytes in the record (VARCHAR with its length bytes; BLOB length + 8)
    null_pos: int
    null_bit: int                     # a mask (0: NOT NULL)
    empty_pos: int
    empty_bit: int                    # a mask (0: no empty bit)


@dataclass(frozen=True)
class RowLayout:
    """What reading a row needs from the ``.MAI``."""

    columns: tuple[ColumnDef, ...]
    null_bytes: int
    pack_bytes: int
    fixed_not_null_fields: int
    has_field_lengths: bool
    checksum: bool


def read_layout(buf: bytes, h: MaiHeader) -> RowLayout:
    """The column definitions at the end of the ``.MAI`` header (module doc)."""
    if not h.base_read:
        raise HeaderError("base info not read: no column definitions", h.base_pos)
    start = h.header_length - h.fields * (MARIA_COLUMNDEF_SIZE + 2)
    if start < h.base_pos or h.header_length > len(buf):
        raise BlockRowError(f"{h.fields} column definitions do not fit the {h.header_length}-byte header", start)
    cols = []
    for i in range(h.fields):
        p = start + i * MARIA_COLUMNDEF_SIZE
        nr, off, typ, length, _fill, null_pos, empty_pos = struct.unpack_from(">HHhHHHH", buf, p)
        null_bit, empty_bit = buf[p + 14], buf[p + 15]
        off |= struct.unpack_from(">H", buf, p + 16)[0] << 16
        if nr >= h.fields or off + length > h.reclength or typ not in range(FIELD_CHECK + 1) or \
                null_pos >= max(h.null_bytes, 1) or empty_pos >= max(h.pack_bytes, 1):
            raise BlockRowError(f"column definition {i} (column {nr}, offset {off}, type {typ}, length {length}) "
                                f"does not fit a record of {h.reclength} bytes", p)
        cols.append(ColumnDef(nr, off, typ, length, null_pos, null_bit, empty_pos, empty_bit))
    return RowLayout(columns=tuple(cols), null_bytes=h.null_bytes, pack_bytes=h.pack_bytes,
                     fixed_not_null_fields=h.fixed_not_null_fields, has_field_lengths=bool(h.max_field_lengths),
                     checksum=bool(h.options & HA_OPTION_CHECKSUM))


def _key_length_inc(buf, pos: int) -> tuple[int, int]:
    """``get_key_length`` (include/myisampack.h): 1 byte, or 255 and a big-endian u2."""
    if buf[pos] != 255:
        return buf[pos], pos + 1
    return struct.unpack_from(">H", buf, pos + 1)[0], pos + 3


def read_block_row(page: bytes, offset: int, length: int, layout: RowLayout) -> dict[int, bytes | None]:
    """The row whose head is ``page[offset:offset + length]``: each column's value by its
    offset in the record (None: NULL): fixed columns at their length (an empty SKIP_ZERO one as
    zeros), CHAR padded back with spaces, VARCHAR and BLOB their bytes."""
    end = offset + length
    pos = offset
    flag = page[pos]
    pos += 1
    if flag & ROW_FLAG_EXTENTS:
        raise BlockRowError("the row goes on in other pages (ROW_FLAG_EXTENTS): not read here", offset)
    pos += (TRANSID_SIZE if flag & ROW_FLAG_TRANSID else 0) + (VERPTR_SIZE if flag & ROW_FLAG_VER_PTR else 0) + \
        (TRANSID_SIZE if flag & ROW_FLAG_DELETE_TRANSID else 0) + (1 if flag & ROW_FLAG_NULLS_EXTENDED else 0)
    lengths_len = 0
    if layout.has_field_lengths:
        lengths_len, pos = _key_length_inc(page, pos)
    pos += 1 if layout.checksum else 0
    nulls = page[pos:pos + layout.null_bytes]
    pos += layout.null_bytes
    empty = page[pos:pos + layout.pack_bytes]
    pos += layout.pack_bytes
    out: dict[int, bytes | None] = {}
    cols = layout.columns
    for c in cols[:layout.fixed_not_null_fields]:
        out[c.offset] = bytes(page[pos:pos + c.length])
        pos += c.length
    lengths = pos
    pos += lengths_len
    for c in cols[layout.fixed_not_null_fields:]:
        if c.null_bit and nulls[c.null_pos] & c.null_bit:
            out[c.offset] = None
            continue
        if c.empty_bit and empty[c.empty_pos] & c.empty_bit:
            out[c.offset] = (b" " * c.length if c.type == FIELD_SKIP_ENDSPACE else
                             b"" if c.type in (FIELD_VARCHAR, FIELD_BLOB) else bytes(c.length))
            continue
        if c.type in FIXED_TYPES:
            n = c.length
        elif c.type == FIELD_SKIP_ENDSPACE:
            n, lengths = (page[lengths], lengths + 1) if c.length <= 255 else \
                (struct.unpack_from("<H", page, lengths)[0], lengths + 2)
        elif c.type == FIELD_VARCHAR:
            n, lengths = (page[lengths], lengths + 1) if c.length <= 256 else \
                (struct.unpack_from("<H", page, lengths)[0], lengths + 2)
        elif c.type == FIELD_BLOB:
            size = c.length - PORTABLE_SIZEOF_CHAR_PTR
            n = int.from_bytes(page[lengths:lengths + size], "little")
            lengths += size
        else:
            raise BlockRowError(f"column {c.column_nr}: field type {c.type} not read here", offset)
        if pos + n > end or lengths > offset + length:
            raise BlockRowError(f"column {c.column_nr} ({n} bytes at {pos}) runs past the row's {length} bytes", pos)
        data = bytes(page[pos:pos + n])
        out[c.offset] = data.ljust(c.length, b" ") if c.type == FIELD_SKIP_ENDSPACE else data
        pos += n
    return out
