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
has its extent count (``get_key_length``) and first extent (7 bytes) after the transaction
header, its other extents at the start of its data; its data goes on in them as
``_ma_read_block_record2`` reads it (``read_next_extent``, ``read_long_data``): full BLOB
pages, then a tail (a directory entry of a TAIL page); fixed fields never split, no field
split between the head and the first extent, each blob after the first extent in extents of
its own.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ..myisam.state import HeaderError
from .blockrec import (BLOB_PAGE, DIR_COUNT_OFFSET, DIR_ENTRY_SIZE, PAGE_HEADER_SIZE, PAGE_SUFFIX_SIZE,
                       PAGE_TYPE_MASK, PAGE_TYPE_OFFSET, TAIL_PAGE)
from .pagecrypt import CRYPT_DATA_LENGTH
from .state import MaiHeader

MARIA_COLUMNDEF_SIZE = 20
#: ma_blockrec.h flag bits of a row's first byte
ROW_FLAG_TRANSID, ROW_FLAG_VER_PTR, ROW_FLAG_DELETE_TRANSID = 1, 2, 4
ROW_FLAG_NULLS_EXTENDED, ROW_FLAG_EXTENTS = 8, 128
#: ma_blockrec.h: a row extent, the page number's bytes, PAGE_COUNT's flags
ROW_EXTENT_SIZE, ROW_EXTENT_PAGE_SIZE = 7, 5
TAIL_BIT, START_EXTENT_BIT = 0x8000, 0x4000
#: LSN + PAGE_TYPE (an encrypted table's pages have the key version after them: RowLayout.crypt_space)
FULL_PAGE_HEADER_SIZE = 8
#: the most pages one row is followed over, and the largest blob read (a damaged length)
MAX_ROW_PAGES = 1 << 20
MAX_BLOB = 1 << 32
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
    #: the key version's bytes in each page header of an encrypted table (ma_crypt.c)
    crypt_space: int = 0


def read_layout(buf: bytes, h: MaiHeader) -> RowLayout:
    """The column definitions at the end of the ``.MAI`` header (module doc)."""
    if not h.base_read:
        raise HeaderError("base info not read: no column definitions", h.base_pos)
    # an encrypted table's crypt data ends the header (ma_crypt_write)
    start = h.header_length - (CRYPT_DATA_LENGTH if h.encrypted else 0) - h.fields * (MARIA_COLUMNDEF_SIZE + 2)
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
                     checksum=bool(h.options & HA_OPTION_CHECKSUM), crypt_space=h.crypt_header_space)


def _key_length_inc(buf, pos: int) -> tuple[int, int]:
    """``get_key_length`` (include/myisampack.h): 1 byte, or 255 and a big-endian u2."""
    if buf[pos] != 255:
        return buf[pos], pos + 1
    return struct.unpack_from(">H", buf, pos + 1)[0], pos + 3


class _Extents:
    """The cursor over a row's extents (ma_blockrec.c MARIA_EXTENT_CURSOR, init_extent,
    read_next_extent): each extent START_PAGE (5 bytes) and PAGE_COUNT (2 bytes, little
    endian; TAIL_BIT: a tail, its low bits the directory entry on a TAIL page; START_EXTENT_BIT:
    a blob's first extent), full BLOB pages read whole after their FULL_PAGE_HEADER_SIZE
    header, a tail as its directory entry's bytes."""

    def __init__(self, first: bytes, count: int, read_page, block_size: int, crypt_space: int = 0):
        self.crypt_space = crypt_space
        self.extents = bytearray(first)
        self.count = count
        self.read_page = read_page
        self.block_size = block_size
        self.first = True
        self.pages_read = 0
        self._load(0)
        if self.tail:
            self.page_count = 1

    def _load(self, k: int) -> None:
        e = self.extents[k * ROW_EXTENT_SIZE:(k + 1) * ROW_EXTENT_SIZE]
        self.page = int.from_bytes(e[:ROW_EXTENT_PAGE_SIZE], "little")
        n = int.from_bytes(e[ROW_EXTENT_PAGE_SIZE:ROW_EXTENT_SIZE], "little") & ~START_EXTENT_BIT
        self.tail = n & TAIL_BIT
        self.tail_row = n & ~TAIL_BIT
        self.page_count = 0 if self.tail else n
        self.raw_count = n
        self.k = k

    def next(self) -> bytes:
        """read_next_extent: the next piece of the row's data (BlockRowError: crashed)."""
        if not self.page_count:
            self.count -= 1
            if self.count <= 0:
                raise BlockRowError("the row's data goes past its last extent", self.page * self.block_size)
            self._load(self.k + 1)
            if not self.raw_count:
                raise BlockRowError(f"extent {self.k} of no pages", self.page * self.block_size)
        self.first = False
        at = self.page * self.block_size
        if self.pages_read >= MAX_ROW_PAGES:
            raise BlockRowError(f"a row of more than {MAX_ROW_PAGES} pages", at)
        page = self.read_page(self.page)
        self.pages_read += 1
        if len(page) < self.block_size:
            raise BlockRowError(f"extent page {self.page} past the end of the file", at)
        kind = page[PAGE_TYPE_OFFSET] & PAGE_TYPE_MASK
        if not self.tail:
            if kind != BLOB_PAGE:
                raise BlockRowError(f"extent page {self.page} is of type {kind}, a BLOB_PAGE expected", at)
            self.page += 1
            self.page_count -= 1
            return bytes(page[FULL_PAGE_HEADER_SIZE + self.crypt_space:self.block_size - PAGE_SUFFIX_SIZE])
        if kind != TAIL_PAGE:
            raise BlockRowError(f"tail page {self.page} is of type {kind}, a TAIL_PAGE expected", at)
        n = page[DIR_COUNT_OFFSET]
        if self.tail_row >= n:
            raise BlockRowError(f"tail {self.tail_row} of a page with {n} directory entries", at)
        d = self.block_size - PAGE_SUFFIX_SIZE - DIR_ENTRY_SIZE * (self.tail_row + 1)
        off, length = struct.unpack_from("<HH", page, d)
        if off < PAGE_HEADER_SIZE + self.crypt_space or off + length > self.block_size - n * DIR_ENTRY_SIZE - PAGE_SUFFIX_SIZE:
            raise BlockRowError(f"tail {self.tail_row} at {off}, {length} bytes: outside its page", at + d)
        self.page_count = 0
        return bytes(page[off:off + length])


class _RowData:
    """The row's bytes as _ma_read_block_record2 takes them: the head's, then each extent's."""

    def __init__(self, page: bytes, pos: int, end: int, extents: _Extents | None, at: int):
        self.data, self.pos, self.end = page, pos, end
        self.extents = extents
        self.at = at

    def _next(self) -> None:
        if self.extents is None:
            raise BlockRowError("the row's fields run past its end", self.at)
        self.data = self.extents.next()
        self.pos, self.end = 0, len(self.data)

    def fixed(self, n: int) -> bytes:
        """A field never split over pieces (fixed columns)."""
        if self.pos + n > self.end:
            self._next()
            if n > self.end:
                raise BlockRowError(f"a field of {n} bytes in a piece of {self.end}", self.at)
        out = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return out

    def long(self, n: int) -> bytes:
        """read_long_data: a field that may go on over several pieces (none split between the
        head and the first extent)."""
        if self.end - self.pos >= n:
            out = bytes(self.data[self.pos:self.pos + n])
            self.pos += n
            return out
        if self.extents is None or self.extents.first:
            self.end = self.pos
        parts = []
        while True:
            left = self.end - self.pos
            if left >= n:
                parts.append(bytes(self.data[self.pos:self.pos + n]))
                self.pos += n
                return b"".join(parts)
            parts.append(bytes(self.data[self.pos:self.end]))
            n -= left
            self._next()

    def blob(self, n: int) -> bytes:
        """A blob: after the first extent each blob starts in an extent of its own."""
        if self.extents is not None and (not self.extents.first or self.end - self.pos < n):
            self.end = self.pos
        return self.long(n)


def read_block_row(page: bytes, offset: int, length: int, layout: RowLayout, read_page=None,
                   block_size: int = 0) -> dict[int, bytes | None]:
    """The row whose head is ``page[offset:offset + length]``: each column's value by its
    offset in the record (None: NULL): fixed columns at their length (an empty SKIP_ZERO one as
    zeros), CHAR padded back with spaces, VARCHAR and BLOB their bytes.  A row that goes on in
    other pages (ROW_FLAG_EXTENTS) is followed through its extents with ``read_page(page_number)``
    (the page's ``block_size`` bytes); without it, BlockRowError."""
    end = offset + length
    pos = offset
    flag = page[pos]
    pos += 1
    if flag & ROW_FLAG_EXTENTS and read_page is None:
        raise BlockRowError("the row goes on in other pages (ROW_FLAG_EXTENTS): not read here", offset)
    pos += (TRANSID_SIZE if flag & ROW_FLAG_TRANSID else 0) + (VERPTR_SIZE if flag & ROW_FLAG_VER_PTR else 0) + \
        (TRANSID_SIZE if flag & ROW_FLAG_DELETE_TRANSID else 0) + (1 if flag & ROW_FLAG_NULLS_EXTENDED else 0)
    extents = None
    row_extents = 0
    if flag & ROW_FLAG_EXTENTS:
        row_extents, pos = _key_length_inc(page, pos)
        if not row_extents or pos + ROW_EXTENT_SIZE > end:
            raise BlockRowError(f"{row_extents} extents in a row head of {length} bytes", offset)
        extents = _Extents(page[pos:pos + ROW_EXTENT_SIZE], row_extents, read_page, block_size, layout.crypt_space)
        pos += ROW_EXTENT_SIZE
    lengths_len = 0
    if layout.has_field_lengths:
        lengths_len, pos = _key_length_inc(page, pos)
    pos += 1 if layout.checksum else 0
    nulls = page[pos:pos + layout.null_bytes]
    pos += layout.null_bytes
    empty = page[pos:pos + layout.pack_bytes]
    pos += layout.pack_bytes
    if pos > end:
        raise BlockRowError(f"row head of {length} bytes cut in its null and empty bits", offset)
    row = _RowData(page, pos, end, extents, offset)
    if row_extents > 1:
        extents.extents += row.long((row_extents - 1) * ROW_EXTENT_SIZE)
    out: dict[int, bytes | None] = {}
    cols = layout.columns
    for c in cols[:layout.fixed_not_null_fields]:
        out[c.offset] = row.fixed(c.length)
    lengths = row.long(lengths_len) if lengths_len else b""
    lp = 0
    for c in cols[layout.fixed_not_null_fields:]:
        if c.null_bit and nulls[c.null_pos] & c.null_bit:
            out[c.offset] = None
            continue
        if c.empty_bit and empty[c.empty_pos] & c.empty_bit:
            out[c.offset] = (b" " * c.length if c.type == FIELD_SKIP_ENDSPACE else
                             b"" if c.type in (FIELD_VARCHAR, FIELD_BLOB) else bytes(c.length))
            continue
        if c.type in FIXED_TYPES:
            out[c.offset] = row.fixed(c.length)
            continue
        if c.type == FIELD_SKIP_ENDSPACE:
            w = 1 if c.length <= 255 else 2
        elif c.type == FIELD_VARCHAR:
            w = 1 if c.length <= 256 else 2
        elif c.type == FIELD_BLOB:
            w = c.length - PORTABLE_SIZEOF_CHAR_PTR
        else:
            raise BlockRowError(f"column {c.column_nr}: field type {c.type} not read here", offset)
        if lp + w > len(lengths):
            raise BlockRowError(f"column {c.column_nr}: its length past the row's {len(lengths)} bytes of lengths",
                                offset)
        n = int.from_bytes(lengths[lp:lp + w], "little")
        lp += w
        if c.type != FIELD_BLOB and n > c.length:
            raise BlockRowError(f"column {c.column_nr}: {n} bytes in a field of {c.length}", offset)
        if c.type == FIELD_BLOB:
            if n > MAX_BLOB:
                raise BlockRowError(f"column {c.column_nr}: a blob of {n} bytes", offset)
            out[c.offset] = row.blob(n)
        else:
            data = row.long(n)
            out[c.offset] = data.ljust(c.length, b" ") if c.type == FIELD_SKIP_ENDSPACE else data
    if extents is not None:
        if extents.page_count:
            raise BlockRowError(f"the row ends before the {extents.page_count} pages left of its extent",
                                extents.page * extents.block_size)
        rest = extents.extents[(extents.k + 1) * ROW_EXTENT_SIZE:]
        if extents.count > 1 and any(rest):
            raise BlockRowError("extents left after the row's data that are not zero", offset)
    return out
