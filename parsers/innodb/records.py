"""Record headers of InnoDB INDEX pages: the record list from infimum to
supremum, and field offsets of REDUNDANT (old-style) and COMPACT / DYNAMIC
(new-style) records.

Enough for the data dictionary (SYS_* tables, always REDUNDANT) and for the
SDI index of MySQL 8 (COMPACT layout with a known column list).  Every walk is
bounded: a next-record pointer that leaves the page, points back into the
header, or revisits a record ends the walk with a :class:`RecordError` naming
the page offset.

Constants are named as in storage/innobase/include/rem0rec.h, page0page.h and
page0types.h (mysql/mysql-server and MariaDB/server; identical there).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

# -- fil0types.h, page0types.h / page0page.h: the FIL header and INDEX page header
# fields, read by fil.py and index.py (one reader per structure)
from .fil import FIL_PAGE_DATA_END
from .index import (PAGE_DATA, PAGE_NEW_INFIMUM, PAGE_NEW_SUPREMUM, PAGE_OLD_INFIMUM, PAGE_OLD_SUPREMUM,
                    IndexHeader, parse_index_header)

# -- rem0rec.h ---------------------------------------------------------------
REC_N_OLD_EXTRA_BYTES = 6
REC_N_NEW_EXTRA_BYTES = 5
REC_NEXT = 2
REC_OLD_SHORT = 3
REC_OLD_SHORT_MASK = 0x1
REC_OLD_N_FIELDS = 4
REC_OLD_N_FIELDS_MASK = 0x7FE
REC_OLD_N_FIELDS_SHIFT = 1
REC_NEW_STATUS = 3
REC_NEW_STATUS_MASK = 0x7
REC_OLD_HEAP_NO = 5
REC_NEW_HEAP_NO = 4
REC_HEAP_NO_MASK = 0xFFF8
REC_HEAP_NO_SHIFT = 3
REC_OLD_N_OWNED = 6
REC_NEW_N_OWNED = 5
REC_N_OWNED_MASK = 0xF
REC_OLD_INFO_BITS = 6
REC_NEW_INFO_BITS = 5
REC_INFO_BITS_MASK = 0xF0
REC_INFO_MIN_REC_FLAG = 0x10
REC_INFO_DELETED_FLAG = 0x20
REC_INFO_VERSION_FLAG = 0x40      # MySQL 8.0.29+: row version byte present
REC_INFO_INSTANT_FLAG = 0x80      # MySQL 8.0: instant ADD COLUMN field count present

REC_STATUS_ORDINARY = 0
REC_STATUS_NODE_PTR = 1
REC_STATUS_INFIMUM = 2
REC_STATUS_SUPREMUM = 3
REC_STATUS_INSTANT = 4            # MariaDB 10.3+ instant metadata record

REC_1BYTE_SQL_NULL_MASK = 0x80
REC_2BYTE_SQL_NULL_MASK = 0x8000
REC_2BYTE_EXTERN_MASK = 0x4000

#: Hard cap on records walked on one page (a 64 KiB page holds < 8200 records).
MAX_RECORDS_PER_PAGE = 16384
#: REDUNDANT records have at most REC_MAX_N_FIELDS (1023) fields.
REC_MAX_N_FIELDS = 1023


class RecordError(Exception):
    """A record header or record list is corrupt; the message names the offset."""


#: the INDEX page header as the record readers see it (index.py's reader)
IndexPageHeader = IndexHeader


def read_index_page_header(page: bytes, offset: int = 0) -> IndexHeader:
    """The INDEX page header (page0types.h PAGE_*) of the page at ``offset``, read by
    index.parse_index_header; RecordError when the page is too short for it."""
    try:
        return parse_index_header(page, offset)
    except ValueError:
        raise RecordError(f"page too short for an INDEX page header ({len(page) - offset} bytes)") from None


@dataclass
class FieldRef:
    """Where one field of a record lies in the page: [start, start+length)."""

    start: int
    length: int
    null: bool = False
    extern: bool = False       # stored off-page: the last 20 bytes are a BTR_EXTERN reference


@dataclass
class RecordHeader:
    """The fixed header bytes before a record origin (old or new style)."""

    origin: int
    compact: bool
    info_bits: int
    n_owned: int
    heap_no: int
    next: int                  # absolute offset of the next record in the page, 0 = none
    status: int                # new style: REC_STATUS_*; old style: derived (infimum/supremum/ordinary)
    n_fields: int = 0          # old style only
    short_offsets: bool = False  # old style only: 1-byte field end offsets

    @property
    def deleted(self) -> bool:
        return bool(self.info_bits & REC_INFO_DELETED_FLAG)

    @property
    def min_rec(self) -> bool:
        return bool(self.info_bits & REC_INFO_MIN_REC_FLAG)


@dataclass
class Record:
    """One user record: its header and its fields' places in the page."""

    header: RecordHeader
    fields: list[FieldRef] = field(default_factory=list)

    def value(self, page: bytes, i: int) -> bytes | None:
        """The bytes of field i as stored in the page (None for SQL NULL)."""
        f = self.fields[i]
        if f.null:
            return None
        return bytes(page[f.start:f.start + f.length])


def _check_origin(page: bytes, origin: int, extra: int, what: str) -> None:
    if origin < PAGE_DATA + extra or origin >= len(page) - FIL_PAGE_DATA_END:
        raise RecordError(f"{what} record origin {origin} outside the record area of a {len(page)}-byte page")


def read_old_record_header(page: bytes, origin: int) -> RecordHeader:
    """Read the 6-byte REDUNDANT record header (rem0rec.h REC_OLD_*) before ``origin``."""
    _check_origin(page, origin, REC_N_OLD_EXTRA_BYTES, "REDUNDANT")
    b6 = page[origin - REC_OLD_INFO_BITS]
    heap = struct.unpack_from(">H", page, origin - REC_OLD_HEAP_NO)[0]
    nf = struct.unpack_from(">H", page, origin - REC_OLD_N_FIELDS)[0]
    short = page[origin - REC_OLD_SHORT] & REC_OLD_SHORT_MASK
    nxt = struct.unpack_from(">H", page, origin - REC_NEXT)[0]
    heap_no = (heap & REC_HEAP_NO_MASK) >> REC_HEAP_NO_SHIFT
    if origin == PAGE_OLD_INFIMUM:
        status = REC_STATUS_INFIMUM
    elif origin == PAGE_OLD_SUPREMUM:
        status = REC_STATUS_SUPREMUM
    else:
        status = REC_STATUS_ORDINARY
    return RecordHeader(origin=origin, compact=False, info_bits=b6 & REC_INFO_BITS_MASK,
                        n_owned=b6 & REC_N_OWNED_MASK, heap_no=heap_no, next=nxt,
                        status=status, n_fields=(nf & REC_OLD_N_FIELDS_MASK) >> REC_OLD_N_FIELDS_SHIFT,
                        short_offsets=bool(short))


def read_new_record_header(page: bytes, origin: int) -> RecordHeader:
    """Read the 5-byte COMPACT/DYNAMIC record header (rem0rec.h REC_NEW_*) before ``origin``."""
    _check_origin(page, origin, REC_N_NEW_EXTRA_BYTES, "COMPACT")
    b5 = page[origin - REC_NEW_INFO_BITS]
    heap = struct.unpack_from(">H", page, origin - REC_NEW_HEAP_NO)[0]
    rel = struct.unpack_from(">H", page, origin - REC_NEXT)[0]
    nxt = 0 if rel == 0 else (origin + rel) % min(len(page), 65536)
    return RecordHeader(origin=origin, compact=True, info_bits=b5 & REC_INFO_BITS_MASK,
                        n_owned=b5 & REC_N_OWNED_MASK, heap_no=(heap & REC_HEAP_NO_MASK) >> REC_HEAP_NO_SHIFT,
                        next=nxt, status=page[origin - REC_NEW_STATUS] & REC_NEW_STATUS_MASK)


def read_old_record(page: bytes, origin: int) -> Record:
    """Read a REDUNDANT record: header plus the field end-offset array before it."""
    hdr = read_old_record_header(page, origin)
    n = hdr.n_fields
    if n == 0 or n > REC_MAX_N_FIELDS:
        raise RecordError(f"REDUNDANT record at {origin}: bad field count {n}")
    width = 1 if hdr.short_offsets else 2
    arr_end = origin - REC_N_OLD_EXTRA_BYTES
    if arr_end - n * width < PAGE_DATA:
        raise RecordError(f"REDUNDANT record at {origin}: {n} field offsets run before the record area")
    fields: list[FieldRef] = []
    prev = 0
    for i in range(n):
        pos = arr_end - (i + 1) * width
        if width == 1:
            raw = page[pos]
            end = raw & ~REC_1BYTE_SQL_NULL_MASK & 0xFF
            null = bool(raw & REC_1BYTE_SQL_NULL_MASK)
            extern = False
        else:
            raw = struct.unpack_from(">H", page, pos)[0]
            end = raw & 0x3FFF
            null = bool(raw & REC_2BYTE_SQL_NULL_MASK)
            extern = bool(raw & REC_2BYTE_EXTERN_MASK)
        if end < prev:
            raise RecordError(f"REDUNDANT record at {origin}: field {i} ends at {end} before {prev}")
        if origin + end > len(page) - FIL_PAGE_DATA_END:
            raise RecordError(f"REDUNDANT record at {origin}: field {i} runs past the page end")
        # a NULL field stores its (fixed-length) bytes as zeros or nothing; length 0 when null
        fields.append(FieldRef(origin + prev, end - prev, null=null, extern=extern))
        prev = end
    return Record(hdr, fields)


@dataclass(frozen=True)
class ColumnSpec:
    """How one field of a COMPACT index record is stored (from the index definition)."""

    name: str
    fixed_len: int = 0         # > 0: fixed length in bytes; 0: variable length
    nullable: bool = False
    big: bool = False          # variable and max length > 255 bytes or a BLOB: 2-byte lengths possible


def read_new_record(page: bytes, origin: int, columns: list[ColumnSpec]) -> Record:
    """Read a COMPACT/DYNAMIC record whose index fields are ``columns``.

    The null bitmap and the variable-length array run backwards from the
    5-byte header (rem0rec.cc rec_init_offsets_comp_ordinary).  Node-pointer
    records hold the key columns and a 4-byte child page number; pass the key
    columns plus ``ColumnSpec('child', 4)``.
    """
    hdr = read_new_record_header(page, origin)
    if hdr.info_bits & (REC_INFO_INSTANT_FLAG | REC_INFO_VERSION_FLAG):
        raise RecordError(f"COMPACT record at {origin}: instant/versioned record headers are not decoded here")
    n_nullable = sum(1 for c in columns if c.nullable)
    pos = origin - REC_N_NEW_EXTRA_BYTES - 1
    null_bytes = (n_nullable + 7) // 8
    null_base = pos                      # bitmap bytes are read from here downwards
    pos -= null_bytes
    end_limit = len(page) - FIL_PAGE_DATA_END
    fields: list[FieldRef] = []
    data = origin
    null_i = 0
    for c in columns:
        if c.nullable:
            byte = page[null_base - null_i // 8] if null_base - null_i // 8 >= PAGE_DATA else 0
            is_null = bool(byte & (1 << (null_i % 8)))
            null_i += 1
            if is_null:
                fields.append(FieldRef(data, 0, null=True))
                continue
        if c.fixed_len:
            ln, extern = c.fixed_len, False
        else:
            if pos < PAGE_DATA:
                raise RecordError(f"COMPACT record at {origin}: length bytes run before the record area")
            b = page[pos]
            pos -= 1
            extern = False
            if c.big and b & 0x80:
                if pos < PAGE_DATA:
                    raise RecordError(f"COMPACT record at {origin}: length bytes run before the record area")
                ln = ((b & 0x3F) << 8) | page[pos]
                extern = bool(b & 0x40)
                pos -= 1
            else:
                ln = b
        if data + ln > end_limit:
            raise RecordError(f"COMPACT record at {origin}: field {c.name!r} of {ln} bytes runs past the page end")
        fields.append(FieldRef(data, ln, extern=extern))
        data += ln
    return Record(hdr, fields)


def walk_record_list(page: bytes, compact: bool, max_records: int = MAX_RECORDS_PER_PAGE) -> list[int]:
    """Origins of the user records of an INDEX page, infimum to supremum, in list order.

    Follows the next-record pointers (rem0rec.h REC_NEXT; absolute in old-style
    pages, relative in new-style pages).  Raises :class:`RecordError` on a
    pointer out of the page, a loop, a list that never reaches the supremum,
    or an infimum/supremum that is not where page0page.h puts it.
    """
    if compact:
        inf, sup, read = PAGE_NEW_INFIMUM, PAGE_NEW_SUPREMUM, read_new_record_header
    else:
        inf, sup, read = PAGE_OLD_INFIMUM, PAGE_OLD_SUPREMUM, read_old_record_header
    if len(page) < sup + 8 + FIL_PAGE_DATA_END:
        raise RecordError(f"page of {len(page)} bytes is too short for an INDEX page")
    if page[inf:inf + 7] != b"infimum" or page[sup:sup + 8] != b"supremum":
        raise RecordError(f"no infimum/supremum record at offsets {inf}/{sup}")
    out: list[int] = []
    seen = {inf}
    hdr = read(page, inf)
    cur = hdr.next
    for _ in range(max_records + 1):
        if cur == sup:
            return out
        if cur == 0:
            raise RecordError(f"record list ends at offset {hdr.origin} before the supremum")
        if cur in seen:
            raise RecordError(f"record list loops back to offset {cur}")
        if cur < sup + 8 or cur >= len(page) - FIL_PAGE_DATA_END:
            raise RecordError(f"next-record pointer at offset {hdr.origin} points to {cur}, outside the record area")
        seen.add(cur)
        out.append(cur)
        hdr = read(page, cur)
        cur = hdr.next
    raise RecordError(f"more than {max_records} records on one page")


@dataclass
class LeafPage:
    """One leaf page reached by a B-tree walk, with its user record origins."""

    page_no: int
    page: bytes
    header: IndexPageHeader
    origins: list[int]


def walk_btree(read_page, root: int, page_types: tuple[int, ...], index_id: int | None,
               child_of, max_pages: int, errors: list[str], where: str = "") -> list[LeafPage]:
    """All leaf pages of the B-tree rooted at ``root``, left to right.

    ``read_page(page_no) -> bytes`` reads a page (raising on failure),
    ``child_of(page, origin, compact) -> int`` gives the child page number of a
    node-pointer record.  The walk is iterative and bounded: each page is
    visited once, at most ``max_pages`` pages, levels must go down by one.
    Problems are appended to ``errors`` (naming ``where`` and the page) and the
    walk goes on with the pages it can still reach: partial results, no raise.
    """
    leaves: list[LeafPage] = []
    visited: set[int] = set()
    stack: list[tuple[int, int | None]] = [(root, None)]     # (page_no, expected level)
    while stack:
        page_no, want_level = stack.pop()
        if page_no in visited:
            errors.append(f"{where} page {page_no}: B-tree page reached twice (loop)")
            continue
        if len(visited) >= max_pages:
            errors.append(f"{where}: B-tree walk stopped after {max_pages} pages")
            break
        visited.add(page_no)
        try:
            page = read_page(page_no)
        except Exception as e:       # PageError / FileReadError: named by the reader
            errors.append(str(e))
            continue
        ptype = struct.unpack_from(">H", page, 24)[0]
        if ptype not in page_types:
            if not any(page):
                errors.append(f"{where} page {page_no}: B-tree page is all zeros")
            else:
                errors.append(f"{where} page {page_no}: page type {ptype}, expected {page_types} for a B-tree page")
            continue
        try:
            hdr = read_index_page_header(page)
        except RecordError as e:
            errors.append(f"{where} page {page_no}: {e}")
            continue
        if index_id is not None and hdr.index_id != index_id:
            errors.append(f"{where} page {page_no}: index id {hdr.index_id}, expected {index_id}")
            continue
        if want_level is not None and hdr.level != want_level:
            errors.append(f"{where} page {page_no}: level {hdr.level}, expected {want_level}")
            continue
        try:
            origins = walk_record_list(page, hdr.compact)
        except RecordError as e:
            errors.append(f"{where} page {page_no}: {e}")
            continue
        if hdr.level == 0:
            leaves.append(LeafPage(page_no, page, hdr, origins))
            continue
        children = []
        for o in origins:
            try:
                children.append(child_of(page, o, hdr.compact))
            except (RecordError, struct.error, IndexError) as e:
                errors.append(f"{where} page {page_no}: node pointer at offset {o}: {e}")
        for c in reversed(children):            # stack: leftmost child first
            if c in visited:
                errors.append(f"{where} page {page_no}: node pointer to page {c}, already visited (loop)")
                continue
            if len(stack) >= max_pages:
                errors.append(f"{where} page {page_no}: more node pointers than pages in the file; walk cut short")
                break
            stack.append((c, hdr.level - 1))
    return leaves
