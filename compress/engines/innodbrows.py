"""Another engine's rows as InnoDB would store them: an **estimate** of the pages a table
converted with ``ALTER TABLE ... ENGINE=InnoDB [PAGE_COMPRESSED=1]`` (or ``CREATE TABLE ...
AS SELECT``) gets, built from the rows as that engine packed them.

What it assumes (each checked against a real MariaDB 10.11, tests/test_archive_cross_engine.py):

* a row's InnoDB record (COMPACT/DYNAMIC) is its packed image (``Field::pack`` of every
  non-NULL field behind the NULL bytes, as ha_archive.cc ``pack_row`` writes it: integers,
  decimals and dates at their width, strings and TEXT behind their 1-2 byte lengths, the way
  InnoDB's variable-length header counts them) plus REC_N_NEW_EXTRA_BYTES (5, rem0rec.h),
  DATA_TRX_ID_LEN (6) and DATA_ROLL_PTR_LEN (7), and DATA_ROW_ID_LEN (6) for the generated
  clustered key of a table without a primary key (an ARCHIVE table has none);
* the rows go into the clustered index in order by a sorted build (btr0bulk.cc), which
  leaves 1/16 of each page free (the default innodb_fill_factor=100: "leaves 1/16 of the
  space in clustered index pages free for future index growth"), a directory slot
  (PAGE_DIR_SLOT_SIZE, 2 bytes) per 4 records;
* a page holds FIL_PAGE_DATA (38) + the index page header (36) + the segment headers (20) +
  infimum and supremum (26) + FIL_PAGE_DATA_END (8) around the records; its bytes are laid
  out as the engine lays them out (record headers with heap numbers and next offsets, one
  transaction id and roll pointer for the whole copy, row ids counting up), so page
  compression sees what it would see;
* the file: FSP_HDR, IBUF_BITMAP and INODE pages, the root and one node pointer record of
  15 bytes (5 + row id + child page number) per leaf page above it; the extents InnoDB
  reserves for a growing file are not counted (free pages: punched in a page-compressed
  file, allocated in a plain one: up to two extents more there).

Off-page columns: a row decoded into its columns (fixedrows.py) comes with its long columns
marked, and a record too big for the page has them moved to BLOB pages as DYNAMIC moves them
(innodbextern.py: data0data.cc ``dtuple_convert_big_rec``, btr0cur.cc
``btr_store_big_rec_extern_fields``), each BLOB page counted whole (plain) or compressed on its
own (page-compressed). ARCHIVE's and Dynamic MyISAM/Aria's packed rows carry no column
boundaries: a row of theirs over half a page gets no estimate (rowmodels.py).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from dbxray.parsers.innodb.fil import FIL_PAGE_INDEX

from ..models import Model
from ..registry import Codec
from .innodb import InnoDBPageCompressed
from .innodbextern import blob_pages, split_records_cut

FIL_PAGE_DATA = 38
PAGE_HEADER_BYTES = 36          # page0page.h: PAGE_HEADER fields up to PAGE_INDEX_ID + 8
FSEG_HEADERS = 20               # PAGE_BTR_SEG_LEAF + PAGE_BTR_SEG_TOP
PAGE_NEW_SUPREMUM_END = 120     # page0page.h: the compact infimum and supremum end here
FIL_PAGE_DATA_END = 8
REC_N_NEW_EXTRA_BYTES = 5
DATA_TRX_ID_LEN = 6
DATA_ROLL_PTR_LEN = 7
DATA_ROW_ID_LEN = 6
PAGE_DIR_SLOT_SIZE = 2
#: records a directory slot owns in a sorted build (page0page.h PAGE_DIR_SLOT_MAX_N_OWNED / 2)
RECS_PER_SLOT = 4
#: the share of a page a sorted build leaves free (innodb_fill_factor = 100)
FILL_RESERVE = 1 / 16
#: node pointer record in the page above a leaf: header + row id + child page number
NODE_PTR_BYTES = REC_N_NEW_EXTRA_BYTES + DATA_ROW_ID_LEN + 4
#: pages of every file-per-table tablespace besides its indexes (fsp0fsp.cc, ibuf0ibuf.cc)
SYSTEM_PAGES = 3
ROW_OVERHEAD = REC_N_NEW_EXTRA_BYTES + DATA_TRX_ID_LEN + DATA_ROLL_PTR_LEN + DATA_ROW_ID_LEN
_U32 = struct.Struct("<I")


def split_rows(data: bytes, start: int) -> list[bytes]:
    """The packed rows of an ARCHIVE row stream from ``start`` (each behind its 4-byte
    length); a row cut off at the end is left out."""
    return split_rows_cut(data, start)[0]


def split_rows_cut(data: bytes, start: int) -> tuple[list[bytes], int]:
    """:func:`split_rows` and the length of the row cut off at the end (0: none; the length
    word itself cut: 0)."""
    rows, p, n = [], start, len(data)
    while 0 <= p and p + 4 <= n:
        length = _U32.unpack_from(data, p)[0]
        if p + 4 + length > n:
            return rows, length
        rows.append(data[p + 4:p + 4 + length])
        p += 4 + length
    return rows, 0


def with_cut_row(figure: int, rows: list[bytes], cut: int) -> int:
    """A run's figure with the row that starts in it and ends in the next run (which skips
    it) counted at the run's bytes per row byte: on a table of large rows a run holds few,
    and leaving that one out would count the table short."""
    whole = sum(len(r) for r in rows)
    if not cut or not whole:
        return figure
    return int(round(figure * (whole + cut) / whole))


def max_in_page_record(page_size: int) -> int:
    """The longest record a page keeps whole (half of an empty page's free space:
    page0page.h page_get_free_space_of_empty / 2); DYNAMIC moves longer records' long
    columns to BLOB pages."""
    return (page_size - PAGE_NEW_SUPREMUM_END - FIL_PAGE_DATA_END - 2 * PAGE_DIR_SLOT_SIZE) // 2


def usable_bytes(page_size: int) -> int:
    """Record and directory bytes a page of a sorted build takes before it is full."""
    room = page_size - FIL_PAGE_DATA - PAGE_HEADER_BYTES - FSEG_HEADERS - (PAGE_NEW_SUPREMUM_END
                                                                           - FIL_PAGE_DATA - PAGE_HEADER_BYTES
                                                                           - FSEG_HEADERS) - FIL_PAGE_DATA_END
    return int(room - page_size * FILL_RESERVE)


def leaf_pages(rows: list[bytes], page_size: int, first_row_id: int = 1) -> tuple[list[bytes], float]:
    """The leaf pages the rows fill, as bytes, and how full the last one is (0..1]."""
    cap = usable_bytes(page_size)
    pages: list[bytes] = []
    batch: list[bytes] = []
    used = 0.0
    row_id = first_row_id

    def page(recs: list[bytes]) -> bytes:
        body = b"".join(recs)
        n = len(recs)
        slots = 2 + n // RECS_PER_SLOT
        head = bytearray(PAGE_NEW_SUPREMUM_END)
        head[24:26] = FIL_PAGE_INDEX.to_bytes(2, "big")                       # FIL_PAGE_TYPE
        struct.pack_into(">HHH", head, FIL_PAGE_DATA, slots, 0x8000 | (n + 2), PAGE_NEW_SUPREMUM_END + len(body))
        struct.pack_into(">H", head, FIL_PAGE_DATA + 16, n)                   # PAGE_N_RECS
        head[FIL_PAGE_DATA + PAGE_HEADER_BYTES + FSEG_HEADERS:] = (b"\x01\x00\x02\x00\x0dinfimum\x00"
                                                                   b"\x03\x00\x0b\x00\x00supremum")
        tail_at = page_size - FIL_PAGE_DATA_END - PAGE_DIR_SLOT_SIZE * slots
        out = bytearray(page_size)
        out[:PAGE_NEW_SUPREMUM_END] = head
        out[PAGE_NEW_SUPREMUM_END:PAGE_NEW_SUPREMUM_END + len(body)] = body[:max(0, tail_at - PAGE_NEW_SUPREMUM_END)]
        for k in range(slots):                                               # slot offsets, high to low
            off = PAGE_NEW_SUPREMUM_END + (len(body) * k) // max(slots, 1)
            struct.pack_into(">H", out, tail_at + PAGE_DIR_SLOT_SIZE * k, off & 0xFFFF)
        return bytes(out)

    for i, r in enumerate(rows):
        size = ROW_OVERHEAD + len(r)
        if batch and used + size + PAGE_DIR_SLOT_SIZE / RECS_PER_SLOT > cap:
            pages.append(page(batch))
            batch, used = [], 0.0
        heap_no = len(batch) + 2
        header = struct.pack(">BHH", 0, (heap_no << 3) & 0xFFFF, size & 0xFFFF)
        batch.append(header + row_id.to_bytes(DATA_ROW_ID_LEN, "big") + b"\0\0\0\0\0\x2a"
                     + b"\x80" + bytes(DATA_ROLL_PTR_LEN - 1) + r)
        used += size + PAGE_DIR_SLOT_SIZE / RECS_PER_SLOT
        row_id += 1
    if batch:
        pages.append(page(batch))
    return pages, (used / cap if batch else 1.0)


def weighted_by_fill(sizes: list[int], last_fill: float) -> int:
    """The stored bytes of a run's pages (or blocks, nodes), the last one partly filled only
    because the run of rows ends: it counts as its share of a full one of this run (the next
    run's rows would fill it)."""
    if not sizes:
        return 0
    if len(sizes) == 1:
        return int(sizes[0])
    full = sum(sizes[:-1]) / (len(sizes) - 1)
    return int(round(sum(sizes[:-1]) + full * last_fill))


@dataclass
class InnoDBFromRowsEstimate(Model):
    """Page-compressed (or plain: the ``none`` codec) InnoDB pages of another engine's rows
    (see the module doc).  A unit is a run of rows (``starts``: where its first whole row
    begins); its figure is the leaf pages its rows fill, each stored as
    :class:`InnoDBPageCompressed` stores a page, the last one counted for its fill."""

    page_size: int = 16384
    fs_block: int = 4096
    starts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: ALTER TABLE ... ENGINE=InnoDB copies the rows into a new table
    rebuilds = True

    def __post_init__(self):
        self.name = "innodb_from_rows_estimate"
        self.granularity = min(self.fs_block, self.page_size)
        self.pages = InnoDBPageCompressed(page_size=self.page_size, fs_block=self.fs_block)

    def supports(self, codec: Codec) -> str | None:
        return self.pages.supports(codec)

    def max_bytes(self, logical: np.ndarray, codec: Codec | None = None, units=None) -> np.ndarray:
        """At most every page whole: the rows' bytes with their overhead, at the fill a sorted
        build leaves, in pages (rows of at least 1 byte)."""
        per_page = usable_bytes(self.page_size)
        worst = np.ceil(logical.astype(np.float64) * (1 + ROW_OVERHEAD) / per_page) + 1
        return (worst * self.page_size).astype(np.int64)

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        start = int(self.starts[unit]) if unit is not None and unit < len(self.starts) else 0
        recs, cut = split_records_cut(payload, start, overhead=ROW_OVERHEAD, page_size=self.page_size)
        rows = [r.image for r in recs]
        pages, last_fill = leaf_pages(rows, self.page_size)
        if not pages:
            return 0
        figure = weighted_by_fill([self.pages.project(codec, p) for p in pages], last_fill)
        figure += sum(self.pages.project(codec, p) for r in recs for v in r.externs
                      for p in blob_pages(v, self.page_size))
        return with_cut_row(figure, rows, cut)

    def file_pages(self, rows: int, avg_row: float) -> int:
        """Pages besides the leaves: the system pages, the root and the node pointer levels."""
        per_page = usable_bytes(self.page_size)
        leaves = max(1, int(np.ceil(rows * (avg_row + ROW_OVERHEAD) / per_page)))
        upper, level = 0, leaves
        while level > 1:
            level = int(np.ceil(level * (NODE_PTR_BYTES + PAGE_DIR_SLOT_SIZE / RECS_PER_SLOT) / per_page))
            upper += level
        return SYSTEM_PAGES + max(upper, 1)
