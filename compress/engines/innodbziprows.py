"""Another engine's rows as InnoDB ROW_FORMAT=COMPRESSED would store them: an **estimate** of
the pages ``ALTER TABLE ... ENGINE=InnoDB ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=k`` (or ``CREATE
TABLE ... AS SELECT``) writes, built from the rows as that engine packed them.

What it assumes (checked against a real MariaDB 10.11, tests/test_archive_cross_engine.py):

* the records are the ones :mod:`innodbrows` builds from the rows (the packed row, InnoDB's
  5-byte header, the generated row id, DB_TRX_ID, DB_ROLL_PTR: its module doc);
* the sorted build (btr0bulk.cc ``PageBulk``) fills a compressed table's 16 KiB page up to the
  index's padding (``dict_index_zip_pad_optimal_page_size``: no fill-factor reserve), then
  compresses it (page0zip.cc ``page_zip_compress``); a page that does not fit its
  KEY_BLOCK_SIZE block is split in two at half its records (``BtrBulk::pageSplit``), again
  until each part fits;
* a page fits when its uncompressed header (PAGE_DATA, 94 bytes), the zlib stream (level 6,
  innodb_compression_level; a 2^14 window) of its records less the 5-byte record headers and
  the DB_TRX_ID / DB_ROLL_PTR columns, the end of the empty modification log (1 byte) and, per
  record, the dense directory slot and the 13 bytes of DB_TRX_ID + DB_ROLL_PTR kept outside
  the stream fill at most the block;
* the padding adapts as dict0dict.cc ``dict_index_zip_pad_update`` adapts it: after every
  ZIP_PAD_ROUND_LEN (128) compressions, more than innodb_compression_failure_threshold_pct (5%)
  failures add ZIP_PAD_INCR (128 bytes), up to innodb_compression_pad_pct_max (50%) of the
  page; five rounds without remove it again. Every run of rows starts with no padding, as a new
  table does (a table much larger than a run reaches more padding and splits fewer pages);
* a record too big for the block (page0zip.h ``page_zip_rec_needs_ext``: ``page_zip_empty_size``)
  has its long columns moved off-page (innodbextern.py), each deflated into its own chain of
  ZBLOB blocks, its BLOB pointers kept out of the page's stream;
* the system pages and the node pointer pages take one block each; the extents the file
  grows by (fsp0fsp.cc) are not added: the figure is the pages the table uses.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from ..models import Model
from ..registry import Codec
from .innodbrows import (DATA_ROW_ID_LEN, FIL_PAGE_DATA_END, PAGE_DIR_SLOT_SIZE, PAGE_NEW_SUPREMUM_END,
                         RECS_PER_SLOT, ROW_OVERHEAD, InnoDBFromRowsEstimate, weighted_by_fill, with_cut_row)
from .innodbextern import BTR_EXTERN_FIELD_REF_SIZE, split_records_cut, zblob_blocks

#: innodb_compression_level's default (page0zip.cc page_zip_level)
ZIP_CODEC = Codec("zlib", 6)
#: page0zip.h / page0page.h: the page header a compressed page keeps uncompressed (PAGE_DATA)
PAGE_DATA = 38 + 36 + 20
#: page0zip.cc: per user record outside the stream: dense directory slot, DB_TRX_ID + DB_ROLL_PTR
PAGE_ZIP_DIR_SLOT_SIZE = 2
DATA_TRX_ID_ROLL_PTR_LEN = 13
#: the modification log's end marker
MLOG_END = 1
#: dict0dict.cc ZIP_PAD_ROUND_LEN, ZIP_PAD_INCR, ZIP_PAD_SUCCESSFUL_ROUND_LIMIT; the server's
#: innodb_compression_failure_threshold_pct (5) and innodb_compression_pad_pct_max (50)
ZIP_PAD_ROUND_LEN = 128
ZIP_PAD_INCR = 128
ZIP_PAD_SUCCESSFUL_ROUND_LIMIT = 5
FAILURE_THRESHOLD_PCT = 5
PAD_PCT_MAX = 50
#: page0zip.cc deflateInit2(..., srv_page_size_shift, ...): the window of a 16 KiB page
PAGE_SIZE_SHIFT = 14


class _ZipPad:
    """dict_index_zip_pad_update: the padding a compressed index keeps free."""

    def __init__(self, page_size: int):
        self.pad = 0
        self.total = 0
        self.failures = 0
        self.good_rounds = 0
        self.most = page_size * PAD_PCT_MAX // 100

    def record(self, ok: bool) -> None:
        self.total += 1
        self.failures += 0 if ok else 1
        if self.total < ZIP_PAD_ROUND_LEN:
            return
        if self.failures * 100 > FAILURE_THRESHOLD_PCT * self.total:
            if self.pad + ZIP_PAD_INCR < self.most:
                self.pad += ZIP_PAD_INCR
            self.good_rounds = 0
        else:
            self.good_rounds += 1
            if self.good_rounds >= ZIP_PAD_SUCCESSFUL_ROUND_LIMIT and self.pad:
                self.pad -= ZIP_PAD_INCR
                self.good_rounds = 0
        self.total = self.failures = 0


def zip_page_fits(streams: list[bytes], key_block_size: int, level: int = 6, outside: int = 0) -> bool:
    """Whether a page of these records (each: the bytes page0zip.cc puts in the stream) fits
    one block (``outside``: more bytes kept out of the stream: the BLOB pointers)."""
    c = zlib.compressobj(level, zlib.DEFLATED, PAGE_SIZE_SHIFT)
    z = len(c.compress(b"".join(streams))) + len(c.flush())
    n = len(streams)
    return PAGE_DATA + z + MLOG_END + n * (PAGE_ZIP_DIR_SLOT_SIZE + DATA_TRX_ID_ROLL_PTR_LEN) + outside \
        <= key_block_size


def zip_leaf_blocks(rows: list[bytes], key_block_size: int, page_size: int = 16384,
                    level: int = 6, externs: list[tuple[int, bytes]] | None = None) -> tuple[list[int], float]:
    """Blocks of each page the sorted build commits for a run of rows (a split page counts its
    parts), and how full the last page is (0..1]. ``externs``: per row, its columns stored
    off-page and its image without their BLOB pointers, which page0zip.cc keeps out of the
    stream (``page_zip_compress_clust_ext``); None: none."""
    pad = _ZipPad(page_size)
    room = page_size - PAGE_NEW_SUPREMUM_END - FIL_PAGE_DATA_END
    per_page: list[int] = []

    def commit(streams: list[bytes], ext: list[int]) -> int:
        ok = len(streams) < 2 or zip_page_fits(streams, key_block_size, level,
                                               BTR_EXTERN_FIELD_REF_SIZE * sum(ext))
        pad.record(ok)
        if ok:
            return 1
        half = len(streams) // 2
        return commit(streams[:half], ext[:half]) + commit(streams[half:], ext[half:])

    page: list[bytes] = []
    page_ext: list[int] = []
    used = 0.0
    for i, r in enumerate(rows):
        size = ROW_OVERHEAD + len(r) + PAGE_DIR_SLOT_SIZE / RECS_PER_SLOT
        if len(page) >= 2 and used + size > room - pad.pad:
            per_page.append(commit(page, page_ext))
            page, page_ext, used = [], [], 0.0
        k, body = externs[i] if externs else (0, r)
        page.append((i + 1).to_bytes(DATA_ROW_ID_LEN, "big") + body)
        page_ext.append(k)
        used += size
    fill = 1.0
    if page:
        fill = min(1.0, used / max(1.0, room - pad.pad))
        per_page.append(commit(page, page_ext))
    return per_page, fill


@dataclass
class InnoDBZipFromRowsEstimate(Model):
    """ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE blocks of another engine's rows (module doc). A
    unit is a run of rows (``starts``: where its first whole row begins)."""

    key_block_size: int = 8192
    page_size: int = 16384
    starts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    rebuilds = True

    def __post_init__(self):
        self.name = f"innodb_row_compressed_kbs{self.key_block_size // 1024}k_from_rows_estimate"
        self.granularity = self.key_block_size

    def supports(self, codec: Codec) -> str | None:
        if codec.family != "zlib":
            return "ROW_FORMAT=COMPRESSED uses zlib only"
        return None

    def max_bytes(self, logical: np.ndarray, codec: Codec | None = None, units=None) -> np.ndarray:
        """At most a block per record (a page split down to one record), rows of >= 1 byte."""
        return (np.asarray(logical, dtype=np.int64) + 1) * self.key_block_size

    def zip_fixed_pages(self, rows: int, avg_row: float) -> int:
        """The system pages, the root and the node pointer pages: one block each."""
        return InnoDBFromRowsEstimate(page_size=self.page_size).file_pages(rows, avg_row)

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        start = int(self.starts[unit]) if unit is not None and unit < len(self.starts) else 0
        recs, cut = split_records_cut(payload, start, zip_size=self.key_block_size, overhead=ROW_OVERHEAD,
                                      page_size=self.page_size)
        rows = [r.image for r in recs]
        level = codec.level or 6
        blocks, fill = zip_leaf_blocks(rows, self.key_block_size, self.page_size, level,
                                       [(len(r.externs), r.unpointed) for r in recs])
        figure = weighted_by_fill([b * self.key_block_size for b in blocks], fill)
        figure += self.key_block_size * sum(zblob_blocks(v, self.key_block_size, level)
                                            for r in recs for v in r.externs)
        return with_cut_row(figure, rows, cut)
