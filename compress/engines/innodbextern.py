"""InnoDB's off-page columns (ROW_FORMAT=DYNAMIC and COMPRESSED) for the cross-engine row
models (innodbrows.py, innodbziprows.py): which long columns of a record too big for its page
InnoDB moves to BLOB pages, and the BLOB pages they take.

Followed from MariaDB server storage/innobase:

* data/data0data.cc ``dtuple_convert_big_rec``: while the record is too big
  (page0zip.h ``page_zip_rec_needs_ext``), the column with the largest saving moves off-page,
  the first of equals in index order; a column is a candidate when it is variable-length,
  not NULL, longer than BTR_EXTERN_LOCAL_STORED_MAX_SIZE (40 bytes) and DATA_BIG_COL (its
  maximum over 255 bytes, or a BLOB/TEXT); DYNAMIC/COMPRESSED keep no prefix: the record then
  holds a 20-byte BLOB pointer (BTR_EXTERN_FIELD_REF_SIZE) behind 2 length bytes carrying the
  external flag (rem0rec.cc ``rec_convert_dtuple_to_rec_comp``);
* ``page_zip_rec_needs_ext``: a record needs it from half an empty page's free space
  (page_get_free_space_of_empty / 2: 8,126 bytes of a 16 KiB page); in a compressed table also
  when, less 2 bytes, it reaches ``page_zip_empty_size`` (the block less PAGE_DATA, one
  record's uncompressed slot, trx id and roll pointer, the heap number and log end bytes, and
  compressBound of the field encoding);
* btr/btr0cur.cc ``btr_store_big_rec_extern_fields``: each moved column gets its own chain of
  pages. Uncompressed: FIL_PAGE_TYPE_BLOB pages carrying page size - FIL_PAGE_DATA (38) -
  BTR_BLOB_HDR_SIZE (8: part length, next page) - FIL_PAGE_DATA_END (8) bytes each.
  ROW_FORMAT=COMPRESSED: the column deflated as one zlib stream (page_zip_level, window 15,
  memLevel 7) over FIL_PAGE_TYPE_ZBLOB / ZBLOB2 pages of KEY_BLOCK_SIZE bytes carrying
  KEY_BLOCK_SIZE - FIL_PAGE_DATA bytes of it each; the compressed clustered page keeps each
  BLOB pointer outside its zlib stream (page0zip.cc ``page_zip_compress_clust_ext``).

The row is framed as the other rows (a 4-byte length, then the record image: fixedrows.py
``innodb_image``) with :data:`EXT_FLAG` set in the length where the image is followed by a
list of its candidate columns, so each model moves the columns its own page needs moved.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

FIL_PAGE_DATA = 38
FIL_PAGE_DATA_END = 8
FIL_PAGE_TYPE_BLOB = 10
BTR_EXTERN_FIELD_REF_SIZE = 20
BTR_EXTERN_LOCAL_STORED_MAX_SIZE = 2 * BTR_EXTERN_FIELD_REF_SIZE
BTR_BLOB_HDR_SIZE = 8
#: rem0rec.cc: the two length bytes of an externally stored column (0x80: 2 bytes, 0x40: extern)
EXTERN_LENGTH_BYTES = bytes((0xC0, BTR_EXTERN_FIELD_REF_SIZE))
#: page0page.h: PAGE_NEW_SUPREMUM_END, PAGE_DIR (FIL_PAGE_DATA_END), PAGE_DIR_SLOT_SIZE
PAGE_NEW_SUPREMUM_END = 120
PAGE_DIR_SLOT_SIZE = 2
#: page0zip.h PAGE_DATA, PAGE_ZIP_CLUST_LEAF_SLOT_SIZE (dense slot + DB_TRX_ID + DB_ROLL_PTR)
PAGE_DATA = 38 + 36 + 20
PAGE_ZIP_CLUST_LEAF_SLOT_SIZE = 2 + 6 + 7
REC_N_NEW_EXTRA_BYTES = 5
#: the length word of a framed row with a candidate list after its image
EXT_FLAG = 1 << 31
_CAND = struct.Struct("<IBII")          # length bytes at, their count, value at, value length
_TAIL = struct.Struct("<HH")            # candidates, the clustered index's fields
_U32 = struct.Struct("<I")


def compress_bound(n: int) -> int:
    """zlib's compressBound."""
    return n + (n >> 12) + (n >> 14) + (n >> 25) + 13


def page_zip_empty_size(n_fields: int, zip_size: int) -> int:
    """page0zip.h ``page_zip_empty_size``: the room for one record on an empty compressed leaf."""
    size = zip_size - (PAGE_DATA + PAGE_ZIP_CLUST_LEAF_SLOT_SIZE + 1 + 1 - REC_N_NEW_EXTRA_BYTES) \
        - compress_bound(2 * (n_fields + 1))
    return max(size, 0)


def half_empty_page(page_size: int = 16384) -> int:
    """page_get_free_space_of_empty(TRUE) / 2."""
    return (page_size - PAGE_NEW_SUPREMUM_END - FIL_PAGE_DATA_END - 2 * PAGE_DIR_SLOT_SIZE) // 2


def needs_ext(rec_size: int, n_fields: int, zip_size: int = 0, page_size: int = 16384) -> bool:
    """page0zip.h ``page_zip_rec_needs_ext`` (``zip_size`` 0: not a compressed table)."""
    if zip_size and rec_size - (REC_N_NEW_EXTRA_BYTES - 2 - 1) >= page_zip_empty_size(n_fields, zip_size):
        return True
    return rec_size >= half_empty_page(page_size)


@dataclass(frozen=True)
class LongField:
    """A column InnoDB may store off-page: where its length bytes and value are in the image."""

    len_at: int
    len_bytes: int
    at: int
    length: int


def frame(image: bytes, longs: list[LongField], n_fields: int, overhead: int, smallest_zip: int = 4096) -> bytes:
    """The row framed for the row models: its image behind its length, with the candidate list
    where some model's page may need a column moved (``overhead``: the record's bytes besides
    the image: header, row id, trx id, roll pointer)."""
    if not longs or not needs_ext(overhead + len(image), n_fields, smallest_zip):
        return _U32.pack(len(image)) + image
    tail = b"".join(_CAND.pack(f.len_at, f.len_bytes, f.at, f.length) for f in longs) + \
        _TAIL.pack(len(longs), n_fields)
    body = image + tail
    return _U32.pack(len(body) | EXT_FLAG) + body


@dataclass
class Record:
    """A row's in-page record image and the column values stored off-page."""

    image: bytes
    externs: list[bytes]
    #: the image without its BLOB pointers (what a compressed page deflates of it)
    unpointed: bytes = b""

    def __post_init__(self):
        if not self.externs:
            self.unpointed = self.image


def convert_big_rec(image: bytes, longs: list[LongField], n_fields: int, overhead: int,
                    zip_size: int = 0, page_size: int = 16384) -> Record:
    """dtuple_convert_big_rec (module doc): the record with its longest candidates moved off
    until it fits (where none is left it is returned as it is: the server refuses such a row)."""
    size = overhead + len(image)
    moved: list[LongField] = []
    left = list(longs)
    while needs_ext(size, n_fields, zip_size, page_size):
        best, saving = None, 0
        for f in left:
            s = f.length - BTR_EXTERN_FIELD_REF_SIZE
            if f.length > BTR_EXTERN_LOCAL_STORED_MAX_SIZE and s > saving:
                best, saving = f, s
        if best is None:
            break
        left.remove(best)
        moved.append(best)
        size += BTR_EXTERN_FIELD_REF_SIZE - best.length + (2 - best.len_bytes)
    if not moved:
        return Record(image, [])
    out, bare, p = [], [], 0
    # splice from the image's start: length bytes and values are at increasing offsets
    cuts = sorted([(f.len_at, f.len_bytes, EXTERN_LENGTH_BYTES, True) for f in moved] +
                  [(f.at, f.length, _ref(f.length), False) for f in moved])
    for at, n, put, keep in cuts:
        out += (image[p:at], put)
        bare += (image[p:at], put if keep else b"")
        p = at + n
    out.append(image[p:])
    bare.append(image[p:])
    return Record(b"".join(out), [image[f.at:f.at + f.length] for f in moved], b"".join(bare))


def _ref(length: int) -> bytes:
    """A BLOB pointer: space id, first page, offset FIL_PAGE_DATA, the length (8 bytes)."""
    return struct.pack(">IIIQ", 0, 0, FIL_PAGE_DATA, length)


def split_records_cut(data: bytes, start: int, zip_size: int = 0, overhead: int = 0,
                      page_size: int = 16384) -> tuple[list[Record], int]:
    """The framed rows of a run from ``start`` as records for a page of ``page_size`` (and a
    compressed table's ``zip_size``), and the length of a row cut off at the end (0: none)."""
    recs, p, n = [], start, len(data)
    while 0 <= p and p + 4 <= n:
        word = _U32.unpack_from(data, p)[0]
        length = word & ~EXT_FLAG
        if p + 4 + length > n:
            return recs, length
        body = data[p + 4:p + 4 + length]
        p += 4 + length
        if not word & EXT_FLAG:
            recs.append(Record(body, []))
            continue
        k, n_fields = _TAIL.unpack_from(body, len(body) - _TAIL.size)
        at = len(body) - _TAIL.size - k * _CAND.size
        longs = [LongField(*_CAND.unpack_from(body, at + i * _CAND.size)) for i in range(k)]
        recs.append(convert_big_rec(body[:at], longs, n_fields, overhead, zip_size, page_size))
    return recs, 0


def blob_payload(page_size: int = 16384) -> int:
    """The column bytes an uncompressed BLOB page carries."""
    return page_size - FIL_PAGE_DATA - BTR_BLOB_HDR_SIZE - FIL_PAGE_DATA_END


def blob_pages(value: bytes, page_size: int = 16384) -> list[bytes]:
    """The FIL_PAGE_TYPE_BLOB pages of one off-page column, as bytes (module doc)."""
    step = blob_payload(page_size)
    pages = []
    for k, i in enumerate(range(0, len(value), step)):
        part = value[i:i + step]
        last = i + step >= len(value)
        page = bytearray(page_size)
        struct.pack_into(">II", page, 4, k + 1, 0xFFFFFFFF)              # FIL_PAGE_OFFSET, FIL_PAGE_PREV
        struct.pack_into(">I", page, 12, 0xFFFFFFFF)                     # FIL_PAGE_NEXT
        struct.pack_into(">H", page, 24, FIL_PAGE_TYPE_BLOB)
        struct.pack_into(">II", page, FIL_PAGE_DATA, len(part), 0xFFFFFFFF if last else k + 2)
        page[FIL_PAGE_DATA + BTR_BLOB_HDR_SIZE:FIL_PAGE_DATA + BTR_BLOB_HDR_SIZE + len(part)] = part
        pages.append(bytes(page))
    return pages


def zblob_blocks(value: bytes, zip_size: int, level: int = 6) -> int:
    """The KEY_BLOCK_SIZE blocks of one off-page column of a compressed table (module doc)."""
    c = zlib.compressobj(level, zlib.DEFLATED, 15, 7)
    z = len(c.compress(value)) + len(c.flush())
    return -(-z // (zip_size - FIL_PAGE_DATA))
