"""InnoDB what-if: one target per tablespace file, projected with the page
compression of MariaDB (PAGE_COMPRESSED) and MySQL (COMPRESSION=), the
ROW_FORMAT=COMPRESSED estimate, the larger-pages approximation and the
filesystem comparisons; the DDL that gets there.

Page types are the parser's (parsers/innodb/fil.py, from fil0fil.h).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from dbxray.parsers.humanize import human_bytes
from dbxray.parsers.innodb.fil import (FIL_PAGE_DATA, FIL_PAGE_INDEX, FIL_PAGE_RTREE, FIL_PAGE_TYPE,
                                       FIL_PAGE_TYPE_ALLOCATED, FIL_PAGE_TYPE_FSP_HDR, FIL_PAGE_TYPE_XDES)
from dbxray.parsers.innodb.fsp import extent_size_pages
from dbxray.parsers.innodb.punch import kept_granularity
from dbxray.parsers.model import UNIT_COMPRESSED, UNIT_CORRUPT, UNIT_ENCRYPTED, UNIT_FREE, FileEntry

from ..bounds import zlib_bound
from ..fsmodels import ext4_extent_tree_bytes, filesystem_type
from ..models import Model, is_zero, roundup
from ..registry import Codec
from ..sources import allocated_in, engine_units, grouped_units, kinds_in
from ..targets import (Result, Run, Split, Target, add_results, combine, measure_speeds, model_pairs,
                       raw_results, shift)
from .base import WhatIfEngine

#: MariaDB fil0pagecompress.cc, fil_page_compress(): "Let's not compress file
#: space header or extent descriptor": page types 0, FSP_HDR, XDES.
INNODB_NEVER_COMPRESSED = (FIL_PAGE_TYPE_ALLOCATED, FIL_PAGE_TYPE_FSP_HDR, FIL_PAGE_TYPE_XDES)
INNODB_NEVER_COMPRESSED_NAMES = ("FIL_PAGE_TYPE_FSP_HDR", "FIL_PAGE_TYPE_XDES")

#: MariaDB algorithms (fsp0types.h PAGE_*_ALGORITHM) and the registry family
#: that reproduces each one's encoder call in fil_page_compress_low():
#: zlib compress2(level), LZ4_compress_default, lzma_easy_buffer_encode(level,
#: LZMA_CHECK_NONE), BZ2_bzBuffToBuffCompress(blockSize100k=1), snappy_compress.
MARIADB_ALGORITHMS = {"zlib": "zlib", "lz4": "lz4", "lzma": "lzma", "bzip2": "bzip2", "snappy": "snappy"}

#: fil0fil.h fil_space_t::full_crc32_page_compressed_len(): for these
#: algorithms the exact payload length is kept in one extra byte before the
#: checksum (their decoders cannot find the end of the stream by themselves).
_LENGTH_BYTE_FAMILIES = ("lz4", "lz4hc", "snappy")

FULL_CRC32_HEADER = 26        # FIL_PAGE_COMP_ALGO: header kept in front of the payload
FULL_CRC32_CHECKSUM = 4       # FIL_PAGE_FCRC32_CHECKSUM
LEGACY_HEADER = 38 + 2        # FIL_PAGE_DATA + FIL_PAGE_COMP_METADATA_LEN (non-full_crc32 layout)
MYSQL_HEADER = FIL_PAGE_DATA  # MySQL keeps the FIL header and compresses the rest (R-tree pages never)

#: MariaDB innodb_compression_algorithm values (fsp0types.h PAGE_*_ALGORITHM)
MARIADB_ALGOS = {"zlib", "lz4", "lzma", "bzip2", "snappy"}
#: MySQL COMPRESSION= values (mysql-server storage/innobase/os/file.cc: Compression::ZLIB, LZ4)
MYSQL_ALGOS = {"zlib", "lz4"}
TABLESPACE_ROLES = ("tablespace", "system_tablespace")
#: schemas of the server itself: no advice (their tables are the server's to manage)
SYSTEM_SCHEMAS = frozenset({"mysql", "sys", "performance_schema", "information_schema"})
#: FULLTEXT auxiliary tables (fts0fts.cc fts_get_table_name: FTS_<table id>_<index id>_INDEX_n,
#: FTS_<table id>_CONFIG, _DELETED, _BEING_DELETED...)
FTS_AUX = re.compile(r"^FTS_[0-9a-fA-F]{16}_", re.I)


def page_type(page: bytes) -> int:
    return int.from_bytes(page[FIL_PAGE_TYPE:FIL_PAGE_TYPE + 2], "big") if len(page) >= 26 else 0


#: page0zip.cc: what a compressed page keeps outside its zlib stream for every user record:
#: the dense page directory slot (PAGE_ZIP_DIR_SLOT_SIZE), on clustered index leaf pages the
#: DB_TRX_ID and DB_ROLL_PTR columns (DATA_TRX_ID_LEN + DATA_ROLL_PTR_LEN), on non-leaf pages
#: the child page number (REC_NODE_PTR_SIZE)
PAGE_ZIP_DIR_SLOT_SIZE = 2
DATA_TRX_ID_ROLL_PTR_LEN = 6 + 7
REC_NODE_PTR_SIZE = 4
PAGE_N_RECS = 38 + 16         # page0page.h, from PAGE_HEADER = FIL_PAGE_DATA
PAGE_LEVEL = 38 + 26
PAGE_INDEX_ID = 38 + 28


def max_records(page_size) -> int:
    """The most user records a page holds: each takes at least its 5 header bytes and one of
    data after the infimum and supremum (PAGE_NEW_SUPREMUM_END = 120, rem0rec.h)."""
    return (page_size - 120) // 6


PAGE_HEAP_TOP = 38 + 2
PAGE_GARBAGE = 38 + 8
#: page0page.h PAGE_NEW_SUPREMUM_END and the FIL trailer (FIL_PAGE_DATA_END): what a page has for records
PAGE_NEW_SUPREMUM_END = 120
FIL_PAGE_DATA_END = 8


def page_fill(page: bytes) -> float:
    """How full an index page's record heap is (PAGE_HEAP_TOP less PAGE_GARBAGE), 0.05..1."""
    if len(page) < PAGE_GARBAGE + 2:
        return 1.0
    top = int.from_bytes(page[PAGE_HEAP_TOP:PAGE_HEAP_TOP + 2], "big")
    garbage = int.from_bytes(page[PAGE_GARBAGE:PAGE_GARBAGE + 2], "big")
    room = len(page) - PAGE_NEW_SUPREMUM_END - FIL_PAGE_DATA_END
    return min(1.0, max(0.05, (top - PAGE_NEW_SUPREMUM_END - garbage) / room))


def page_zip_record_bytes(page: bytes, clustered_index: int | None) -> int:
    """Bytes an index page's records keep uncompressed beside the stream (page0zip.cc)."""
    if len(page) < PAGE_INDEX_ID + 8:
        return 0
    n = min(int.from_bytes(page[PAGE_N_RECS:PAGE_N_RECS + 2], "big"), max_records(len(page)))
    level = int.from_bytes(page[PAGE_LEVEL:PAGE_LEVEL + 2], "big")
    per = PAGE_ZIP_DIR_SLOT_SIZE
    if level > 0:
        per += REC_NODE_PTR_SIZE
    elif clustered_index is not None and \
            int.from_bytes(page[PAGE_INDEX_ID:PAGE_INDEX_ID + 8], "big") == clustered_index:
        per += DATA_TRX_ID_ROLL_PTR_LEN
    return n * per


# ---------------------------------------------------------------------------
# storage models
@dataclass
class InnoDBPageCompressed(Model):
    """MariaDB PAGE_COMPRESSED=1 (and the same idea for MySQL COMPRESSION=).

    Source (MariaDB): storage/innobase/fil/fil0pagecompress.cc
    ``fil_page_compress_for_full_crc32``: the compressed payload follows the
    first 26 bytes of the page (FIL_PAGE_COMP_ALGO); the write size is
    ``(26 + payload + lsb + 4 + 255) & ~255`` (lsb = 1 length byte for
    lz4/lzo/snappy, 4 = checksum); when that is not smaller than the page the
    page is written uncompressed; otherwise it is rounded up to the
    filesystem block and the rest of the page is punched.  The legacy
    (non-full_crc32) layout keeps a 38 + 2 byte header.  FSP_HDR, XDES and
    type-0 pages are never compressed (written whole).  An all-zero page was
    never written: page_compressed tablespaces are extended sparse and freed
    pages are punched, so it takes no block.

    ``layout="mysql"`` is MySQL's COMPRESSION='zlib'|'lz4' (mysql-server
    storage/innobase/os/file.cc os_file_compress_page): bytes 38.. of the page
    are compressed (zlib at innodb_compression_level 6, LZ4_compress_default),
    the page is kept compressed only when header + payload fit in one block
    less than the page, and is written rounded up to the block; R-tree pages
    and pages smaller than two blocks are written whole.
    """

    page_size: int = 16384
    fs_block: int = 4096
    layout: str = "full_crc32"      # MariaDB full_crc32, MariaDB "legacy", or "mysql"
    #: the codec the pages are stored with now, where its stored sizes are exact
    #: (:func:`stored_sizes_exact`), and each unit's stored bytes (the engine's write size before
    #: the punch, from the page's header; -1 where not stored compressed): that codec's
    #: projection of such a page is its stored size, nothing re-encoded
    stored_codec: str | None = field(default=None, compare=False, repr=False)
    stored_sizes: np.ndarray | None = field(default=None, compare=False, repr=False)
    #: ALTER TABLE ... PAGE_COMPRESSED / COMPRESSION= + OPTIMIZE rebuilds the table
    rebuilds = True

    def __post_init__(self):
        self.name = "innodb_page_compressed"
        self.granularity = min(self.fs_block, self.page_size)

    def supports(self, codec: Codec) -> str | None:
        if codec.is_chain:
            return "ClickHouse codec chains do not apply to InnoDB pages"
        return None

    def fixed_by_kind(self, kind_name):
        if kind_name in INNODB_NEVER_COMPRESSED_NAMES:
            return self.page_size
        return None

    def fixed_by_payload(self, payload: bytes) -> int | None:
        if is_zero(payload):
            return 0
        if page_type(payload) in INNODB_NEVER_COMPRESSED:
            return self.page_size
        if self.layout == "mysql" and (page_type(payload) == FIL_PAGE_RTREE
                                       or self.page_size < 2 * self.fs_block):
            return self.page_size
        return None

    def write_size(self, codec: Codec, payload_len: int) -> int:
        """Bytes allocated for a page whose compressed payload is ``payload_len``
        (the engine's write size rounded up to the filesystem block, at most the page)."""
        size = self.engine_write_size(codec, payload_len)
        return min(self.page_size, roundup(size, self.fs_block))

    def engine_write_size(self, codec: Codec, payload_len: int) -> int:
        """Bytes the engine writes before the punch (the page size when it stores it uncompressed)."""
        page = self.page_size
        if codec.family == "none":
            return page
        if self.layout == "mysql":
            # mysql-server storage/innobase/os/file.cc os_file_compress_page(): the 38-byte
            # header stays, the rest is compressed; it "must compress to <= N-1 FS blocks",
            # then header + payload is rounded up to the block
            if payload_len > page - (MYSQL_HEADER + self.fs_block):
                return page
            return MYSQL_HEADER + payload_len
        if self.layout == "full_crc32":
            lsb = 1 if codec.family in _LENGTH_BYTE_FAMILIES else 0
            if payload_len > page - FULL_CRC32_HEADER:
                return page
            size = (FULL_CRC32_HEADER + payload_len + lsb + FULL_CRC32_CHECKSUM + 255) & ~255
            return page if size >= page else size
        if payload_len > page - LEGACY_HEADER:
            return page
        return LEGACY_HEADER + payload_len

    def max_bytes(self, logical: np.ndarray, codec: Codec | None = None, units=None) -> np.ndarray:
        """A page takes at most the page: the engine writes it uncompressed when compression
        does not save a block (fil0pagecompress.cc; os0file.cc for MySQL)."""
        return np.full(len(logical), self.page_size, dtype=np.int64)

    def known_size(self, codec: Codec, payload: bytes, unit: int | None = None) -> int | None:
        """A page stored compressed with ``codec`` itself takes what it takes now: the engine's
        write size in its header (full_crc32: FIL_PAGE_TYPE's stored length, a multiple of 256
        with the checksum and the length byte), rounded up to the block as :meth:`write_size`
        rounds an encoded page's."""
        if self.stored_sizes is None or unit is None or codec.name != self.stored_codec:
            return None
        stored = int(self.stored_sizes[unit])
        if stored < 0 or self.fixed_by_payload(payload) is not None:
            return None
        return min(self.page_size, roundup(stored, self.fs_block))

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        fixed = self.fixed_by_payload(payload)
        if fixed is not None:
            return fixed
        if codec.family == "none":
            return self.page_size
        if self.layout == "mysql":
            return self.write_size(codec, codec.compressed_size(payload[MYSQL_HEADER:]))
        return self.write_size(codec, codec.compressed_size(payload))


@dataclass
class InnoDBRowCompressedEstimate(Model):
    """ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=k: an **estimate**, not the engine.

    page0zip.cc compresses the records of an index page with zlib
    (innodb_compression_level, default 6) into a KEY_BLOCK_SIZE page that
    also keeps the uncompressed page header, a dense page directory, a
    modification log and, per record, what stays outside the stream
    (page_zip_record_bytes: directory slot, DB_TRX_ID + DB_ROLL_PTR on clustered
    leaf pages, child page numbers on non-leaf pages).  We compress the whole
    logical page with zlib, add those bytes and ask how many blocks of
    KEY_BLOCK_SIZE minus a reserve (94 bytes of headers, 1/8 of the block for
    the modification log) they fill.  The DDL rebuilds the table: its bulk load
    packs records into full pages and a full page that does not fit one block is
    split, so a page ``fill`` full counts ``fill * ceil(blocks / fill)`` blocks.
    Non-index pages take one block each; the file those pages make is sized by
    rfc_file_pages (fsp0fsp.cc).
    """

    page_size: int = 16384
    key_block_size: int = 8192
    header_reserve: int = 94
    log_fraction: float = 1 / 8
    #: ALTER TABLE ... ROW_FORMAT=COMPRESSED copies the rows into a new table
    rebuilds = True
    #: the clustered index's id (its leaf records keep DB_TRX_ID and DB_ROLL_PTR outside the stream)
    clustered_index: int | None = None

    def __post_init__(self):
        self.name = f"innodb_row_compressed_kbs{self.key_block_size // 1024}k_estimate"
        self.granularity = self.key_block_size

    def supports(self, codec: Codec) -> str | None:
        if codec.family != "zlib":
            return "ROW_FORMAT=COMPRESSED uses zlib only"
        return None

    def capacity(self) -> int:
        return int(self.key_block_size - self.header_reserve - self.key_block_size * self.log_fraction)

    def fixed_by_payload(self, payload: bytes) -> int | None:
        if is_zero(payload):
            # a page never written (a free page of a reserved extent): the rebuild that
            # ROW_FORMAT=COMPRESSED takes (ALTER TABLE copies the rows) does not carry it over
            return 0
        if page_type(payload) != FIL_PAGE_INDEX:
            return self.key_block_size
        return None

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        fixed = self.fixed_by_payload(payload)
        if fixed is not None:
            return fixed
        z = codec.compressed_size(payload) + page_zip_record_bytes(payload, self.clustered_index)
        blocks = z / self.capacity()
        fill = page_fill(payload)
        # the rebuild packs the records into full pages (btr0bulk.cc, innodb_fill_factor 100); a
        # full page that does not compress into one block is split (page0zip.cc, btr0btr.cc):
        # this page's records are ``fill`` of a full page that takes ceil(blocks / fill) blocks
        return int(round(self.key_block_size * max(fill * math.ceil(blocks / fill - 1e-9), fill)))

    def max_bytes(self, logical: np.ndarray, codec: Codec | None = None, units=None) -> np.ndarray:
        """The most a page can take: the blocks its worst-case zlib stream (compressBound,
        compress/bounds.py) and the most records' bytes kept beside it fill at this capacity:
        page0zip.cc page_zip_compress() fails on a page that does not fit, and the B-tree
        splits it (btr0btr.cc) until it does."""
        logical = np.asarray(logical, dtype=np.int64)
        per = PAGE_ZIP_DIR_SLOT_SIZE + DATA_TRX_ID_ROLL_PTR_LEN + REC_NODE_PTR_SIZE
        most = zlib_bound(logical) + np.maximum(logical - 120, 0) // 6 * per
        return self.key_block_size * np.maximum(1, -(-most // self.capacity()))


# ---------------------------------------------------------------------------
# ROW_FORMAT=COMPRESSED: the file the rebuild writes (fsp0fsp.cc)
#: fsp0fsp.cc FSEG_FRAG_LIMIT (FSEG_FRAG_ARR_N_SLOTS = FSP_EXTENT_SIZE / 2): a segment takes
#: its first 32 pages one by one from fragment extents, whole extents after that
FSEG_FRAG_LIMIT = 32
#: fsp0fsp.h FSP_FREE_ADD: beyond the threshold the file grows 4 extents at a time
FSP_FREE_ADD = 4
#: page 0 FSP_HDR, page 1 IBUF_BITMAP, page 2 INODE of a new file-per-table tablespace
#: (fsp_header_init, btr_create)
FSP_FIRST_PAGES = 3


def rfc_file_pages(data_pages: float, shares: list[float], physical: int, logical: int,
                   slack_extents: int = 0) -> int:
    """Pages of the file a rebuild into ROW_FORMAT=COMPRESSED writes for ``data_pages``
    compressed index pages split between the indexes by ``shares``, as fsp0fsp.cc allocates
    and grows it (MariaDB 10.11):

    * every index has two segments (leaf, non-leaf: btr_create); a segment takes its first
      FSEG_FRAG_LIMIT pages one at a time from the fragment extents (FSP_FREE_FRAG, shared
      with the 3 first pages), then whole extents of FSP_EXTENT_SIZE pages
      (fseg_alloc_free_page_low); the non-leaf pages of these small trees stay in fragments;
    * a file within its first extent (every segment still in fragment pages) grows page by
      page (fsp_reserve_free_pages), so it takes just its pages;
    * beyond, the file is extended by fsp_try_extend_data_file: first to one extent of the logical
      page size (fsp_get_extent_size_in_pages(physical) pages: 1 MiB), then by that much
      while the file is under min(32 such extents, physical) pages (32 MiB), by FSP_FREE_ADD
      times that much beyond (fsp_get_pages_to_extend_ibd).

    ``slack_extents`` more extents give the interval's upper end (a segment can hold one
    more, partly used, extent than its pages need: seen on a real rebuild)."""
    ext = extent_size_pages(logical)            # pages of an extent (FSP_EXTENT_SIZE)
    frag = float(FSP_FIRST_PAGES)
    extents = 0
    total = sum(shares) or 1.0
    for share in shares or [1.0]:
        p = max(0.0, data_pages) * share / total
        f = min(p, FSEG_FRAG_LIMIT + 1)         # leaf fragments + the root in the non-leaf segment
        frag += f
        extents += math.ceil(max(0.0, p - f) / ext - 1e-9)
    if extents == 0 and frag <= ext:
        # a file within its first extent grows page by page (fsp_reserve_free_pages,
        # fsp_try_extend_data_file_with_pages): only its used pages are allocated
        return math.ceil(frag - 1e-9)
    need = (math.ceil(frag / ext - 1e-9) + extents + slack_extents) * ext
    step = (extent_size_pages(logical) * logical) // physical     # fsp_get_extent_size_in_pages
    threshold = min(32 * step, physical)
    if need <= threshold:
        return max(step, math.ceil(need / step) * step)
    big = step * FSP_FREE_ADD
    return threshold + math.ceil((need - threshold) / big) * big


def rfc_file_estimate(est, model: "InnoDBRowCompressedEstimate", shares: list[float], logical: int,
                      fs: str | None, fs_block: int):
    """The projected compressed pages turned into the file's allocated bytes (rfc_file_pages):
    the estimate and its ends mapped through the (monotone) sizing, the upper end with one
    extent of slack; on ext4 the upper end also has room for the extent-tree block of a
    file grown in several steps (fsmodels.ext4_extent_tree_bytes)."""
    from ..estimate import Estimate
    kbs = model.key_block_size

    def size(b: float, slack: int = 0) -> float:
        pages = max(0.0, b / kbs - FSP_FIRST_PAGES)
        return float(rfc_file_pages(pages, shares, kbs, logical, slack) * kbs)

    proj, lo, hi = size(est.projected), size(est.lo), size(est.hi, 1)
    if fs == "ext4":
        steps = 1 + math.ceil(hi / (1 << 20))
        extra = ext4_extent_tree_bytes(steps, fs_block) or fs_block
        hi += extra
        proj += ext4_extent_tree_bytes(1 + math.ceil(proj / (1 << 20)), fs_block)
    bound = None if est.bound is None else max(size(est.bound, 1) + (hi - size(est.hi, 1)), hi)
    return Estimate(proj, min(lo, proj), max(hi, proj), est.variance, est.df, est.units_sampled, est.units_total,
                    bound)


@dataclass
class InnoDBLargerPagesApprox(InnoDBPageCompressed):
    """Page compression with 32/64 KiB pages: an **approximation**.

    A 64 KiB page is approximated by 4 consecutive 16 KiB data pages (index,
    BLOB...) of the same owner compressed together, then stored as
    :class:`InnoDBPageCompressed` would store one page of that size; every
    system page (FSP header, inode, bitmap, free page) becomes one 64 KiB
    page of its own (zero-padded), so the FSP header takes 64 KiB as it would.
    """

    factor: int = 4

    def __post_init__(self):
        self.page_size = self.page_size * self.factor
        super().__post_init__()
        self.name = f"innodb_page_compressed_{self.page_size // 1024}k_pages_approximation"


# ---------------------------------------------------------------------------
# targets
#: MariaDB's page-compression calls that take no level (fil0pagecompress.cc fil_page_compress_low:
#: LZ4_compress_default, BZ2_bzBuffToBuffCompress with blockSize100k 1, snappy_compress): the
#: stored pages are what the current codec makes of them.  zlib and lzma take
#: innodb_compression_level / PAGE_COMPRESSION_LEVEL, which no page records (the current codec's
#: level is a guess, 6): their pages are re-encoded
STORED_EXACT_FAMILIES = ("lz4", "bzip2", "snappy")


def stored_sizes_exact(entry: FileEntry, base, current: Codec | None, layout: str, page_size: int) -> np.ndarray | None:
    """Each unit's stored bytes where they are exactly what ``current`` makes of the page
    (-1 elsewhere), None where none is: MariaDB full_crc32 tablespaces (one algorithm for the
    whole file, in its FSP flags; the legacy layout and MySQL's keep one per page, which may be
    another than the file's first) of a level-free codec, not encrypted; pages stored compressed
    (not corrupt, shorter than the page)."""
    if current is None or layout != "full_crc32" or current.family not in STORED_EXACT_FAMILIES:
        return None
    sec = entry.sections.get("innodb", {}) or {}
    if sec.get("encryption") or sec.get("physical_page_size", page_size) != page_size:
        return None
    units = entry.units[base.meta["index"]]
    flags = units["flags"]
    stored = units["stored"].astype(np.int64)
    ok = ((flags & UNIT_COMPRESSED) != 0) & ((flags & (UNIT_ENCRYPTED | UNIT_CORRUPT)) == 0) & (stored < page_size) \
        & (stored > 0)
    if not ok.any():
        return None
    return np.where(ok, stored, -1)


def innodb_current_codec(entry: FileEntry) -> tuple[Codec | None, str]:
    """The codec a tablespace is written with now, and the layout of its pages."""
    sec = entry.sections.get("innodb", {}) or {}
    algo = sec.get("compression_algorithm")
    layout = "full_crc32"
    cs = (sec.get("checksum") or {}).get("algorithm") if isinstance(sec.get("checksum"), dict) else None
    if sec.get("fsp_flags") is not None and isinstance(sec.get("fsp_flags"), int) and not sec["fsp_flags"] & 0x10:
        layout = "legacy"
    if cs and "full_crc32" not in str(cs) and sec.get("page_compressed"):
        layout = "legacy"
    if "FIL_PAGE_SDI" in (entry.kind_names or {}).values():
        layout = "mysql"         # MySQL 8 (SDI pages): MySQL's transparent page compression
    if not sec.get("page_compressed") or not algo:
        return None, layout
    algo = str(algo).lower()
    level = sec.get("page_compression_level") or 6
    if algo == "zlib":
        return Codec("zlib", int(level)), layout
    if algo == "lzma":
        return Codec("lzma", int(level)), layout
    if algo == "bzip2":
        return Codec("bzip2", 1), layout
    if algo in ("lz4", "snappy"):
        return Codec(algo), layout
    return None, layout


def _db_from_path(path: str) -> str | None:
    parts = path.split("/")
    return parts[-2] if len(parts) >= 2 else None


def _table_from_path(path: str) -> str | None:
    name = path.split("/")[-1]
    name = name.rsplit(".", 1)[0]
    return name.split("#P#")[0].split("#p#")[0] or None


#: page kinds that stay pages of their own in the larger-pages approximation
_INNODB_SYSTEM_KINDS = (None, "FIL_PAGE_TYPE_FSP_HDR", "FIL_PAGE_TYPE_XDES", "FIL_PAGE_INODE",
                        "FIL_PAGE_IBUF_BITMAP", "FIL_PAGE_TYPE_ALLOCATED")


def innodb_zip_target(run: Run, entry: FileEntry, codecs: list[Codec], sec: dict) -> Target:
    """ROW_FORMAT=COMPRESSED tablespace: its pages are zlib streams the parser does not
    inflate, so only the raw-file comparisons are projected (re-compressing them would
    measure compressed data)."""
    t = Target(entry.path, "innodb", int(entry.lasting_allocated_bytes), int(entry.apparent_bytes),
               current_codec="zlib:6", primary_model="innodb_row_compressed",
               info={"database": entry.database or _db_from_path(entry.path),
                     "table": entry.table or _table_from_path(entry.path), "role": entry.role})
    run.errors.append(f"{entry.path}: ROW_FORMAT=COMPRESSED (KEY_BLOCK_SIZE="
                      f"{int(sec.get('physical_page_size') or 0) // 1024}): pages are not decompressed, "
                      f"only the filesystem comparisons are projected")
    if run.raw_models:
        raw_results(run, t, entry, codecs)
    return t


def punch_granularity(entry: FileEntry, layout: str, page_size: int) -> int | None:
    """What a page-compressed page keeps is a multiple of this: the server's punch block
    (MariaDB / MySQL rule, parsers/innodb/punch.py) or the filesystem block, the larger;
    None where the file's filesystem facts are unknown (a saved scan of an older version)."""
    fs = entry.fs
    if fs is None:
        return None
    keep = kept_granularity("mysql" if layout == "mysql" else "mariadb", fs.st_blksize, page_size, fs.block_size)
    return keep if keep is not None else page_size


#: the tablespace's own bookkeeping pages (fsp0fsp.cc, ibuf0ibuf.cc, trx0sys.cc): written whole
#: whatever the codec, and there again after a rebuild (the fixed overhead of a split)
OVERHEAD_KINDS = frozenset({"FIL_PAGE_TYPE_FSP_HDR", "FIL_PAGE_TYPE_XDES", "FIL_PAGE_INODE",
                            "FIL_PAGE_IBUF_BITMAP", "FIL_PAGE_TYPE_TRX_SYS", "FIL_PAGE_TYPE_SYS"})


#: MariaDB 10.11 (and MySQL 8.0): the system tablespace grows and never shrinks; OPTIMIZE TABLE /
#: ALTER TABLE ... FORCE rebuild a table (into its own file with innodb_file_per_table), never
#: ibdata1, whose free pages the server reuses (MariaDB 11.2 first shrinks it at startup)
SYSTEM_TABLESPACE_NOTE = ("the system tablespace never shrinks (MariaDB 10.11: OPTIMIZE TABLE and ALTER TABLE "
                          "... FORCE rebuild tables, not ibdata1); its free pages are reused by the server "
                          "inside the file, never given back")


def free_units(entry: FileEntry, idx: np.ndarray, zero: np.ndarray | None) -> np.ndarray:
    """Pages a rebuild does not carry over: free in the extent descriptors (XDES bitmaps, the
    free extents, pages past FSP_FREE_LIMIT: the page map's ``free``) or never written (wholly
    in a hole or an unwritten extent)."""
    free = (entry.units["flags"][idx] & UNIT_FREE) != 0
    if zero is not None:
        free = free | zero
    return free


def innodb_split(entry: FileEntry, base, free: np.ndarray, current_bytes: int) -> Split:
    """Compressible / overhead / reclaimable allocated bytes of a tablespace (see :class:`Split`).

    Each page counts what the filesystem holds for it now (:func:`allocated_in`: a punched
    page-compressed page its kept blocks, a page in an unwritten extent its whole size).
    Reclaimable: the free pages, the file's allocated tail past its last page and what is
    allocated past the end of the file (fallocate KEEP_SIZE; XFS's own speculative
    preallocation is not counted as usage at all).  What the filesystem counts beyond the
    file's blocks (ext4 extent-tree blocks) is overhead."""
    idx = base.meta["index"]
    units = entry.units[idx]
    offsets = units["offset"].astype(np.int64)
    lengths = units["logical"].astype(np.int64)
    alloc = allocated_in(entry, offsets, lengths)
    overhead_mask = kinds_in(base.kinds or [None] * len(base), OVERHEAD_KINDS) & ~free
    free_bytes = int(alloc[free].sum())
    overhead = int(alloc[overhead_mask].sum())
    compressible = int(alloc[~free & ~overhead_mask].sum())
    end = int((offsets + lengths).max()) if len(offsets) else 0
    apparent = int(entry.apparent_bytes)
    tail = int(allocated_in(entry, np.array([end]), np.array([apparent - end]))[0]) if apparent > end else 0
    past_eof = 0 if entry.fs is None or entry.fs.type == "xfs" else int(entry.past_eof_bytes)
    reclaimable = free_bytes + tail + past_eof
    fs_meta = int(current_bytes) - compressible - overhead - reclaimable
    if fs_meta < 0:                    # allocation facts of another moment: the free space takes the difference
        reclaimable = max(0, reclaimable + fs_meta)
        fs_meta = 0
    detail = {"free_pages": int(free.sum()), "free_page_bytes": free_bytes, "tail_bytes": tail,
              "past_eof_bytes": past_eof}
    return Split(compressible, overhead + fs_meta, reclaimable, detail=detail)


def sparse_in_pages(entry: FileEntry, base, free: np.ndarray) -> int:
    """Bytes of the pages in use (not free) that the filesystem holds as holes now."""
    units = entry.units[base.meta["index"]]
    lengths = units["logical"].astype(np.int64)
    alloc = allocated_in(entry, units["offset"].astype(np.int64), lengths)
    return int((lengths - alloc)[~free].sum())


def clustered_index(base) -> int | None:
    """The clustered index of a file-per-table tablespace: the first one created, the lowest
    index id among its index pages (dict0crea.cc creates it before the secondary ones)."""
    if not base.kinds:
        return None
    owners = np.asarray(base.strata, dtype=np.int64)[kinds_in(base.kinds, ("FIL_PAGE_INDEX",))]
    owners = owners[owners >= 0]
    return int(owners.min()) if len(owners) else None


def index_shares(base) -> list[float]:
    """Each index's share of the tablespace's index pages (its owner's INDEX pages): how the
    ROW_FORMAT=COMPRESSED pages split between the indexes' segments."""
    kinds = base.kinds or []
    owners = np.asarray(base.strata, dtype=np.int64)[kinds_in(kinds, ("FIL_PAGE_INDEX",))] if kinds else []
    if not len(owners):
        return [1.0]
    _, counts = np.unique(owners, return_counts=True)
    return [float(c) for c in counts]


def innodb_target(run: Run, entry: FileEntry, codecs: list[Codec]) -> Target:
    sec = entry.sections.get("innodb", {}) or {}
    phys, logical = sec.get("physical_page_size"), sec.get("page_size")
    if phys and logical and int(phys) < int(logical):
        return innodb_zip_target(run, entry, codecs, sec)
    base = engine_units(entry)
    page_size = int(sec.get("page_size") or (base.logical.max() if len(base) else 16384))
    current, layout = innodb_current_codec(entry)
    fs_block = int(run.fs_block or punch_granularity(entry, layout, page_size) or entry.fs_block or 4096)
    t = Target(entry.path, "innodb", int(entry.lasting_allocated_bytes), base.logical_bytes,
               current_codec=current.name if current else "none", primary_model="innodb_page_compressed",
               info={"database": entry.database or _db_from_path(entry.path),
                     "table": entry.table or _table_from_path(entry.path), "page_size": page_size,
                     "layout": layout, "role": entry.role})
    all_codecs = list(codecs)
    if current is not None and current.name not in {c.name for c in all_codecs}:
        all_codecs.append(current)
    base.free = free_units(entry, base.meta["index"], base.zero)
    t.split = innodb_split(entry, base, base.free, t.current_bytes)
    if entry.role == "system_tablespace":
        t.split.shrinks = False
        t.split.shrink_note = SYSTEM_TABLESPACE_NOTE
    if current is None:
        sparse = sparse_in_pages(entry, base, base.free)
        if sparse:
            t.notes.append(f"sparse now: {human_bytes(sparse)} of the pages in use are holes (zero blocks left "
                           f"unallocated, as a sparse copy leaves them); the engine writes a page that is not "
                           f"page-compressed whole, so the 'none' projection counts them and is larger than "
                           f"the file by that much: not a compression effect (no compression saving is given "
                           f"for the file's own codec)")
    enc = sec.get("encryption") or {}
    hidden = int(enc.get("encrypted_pages") or 0) - int(enc.get("decrypted_pages") or 0)
    if hidden > 0:
        # the engine compresses a page before it encrypts it: ciphertext says nothing of what
        # compression would make of the rows (fil0crypt.cc, fil0pagecompress.cc)
        t.notes.append(f"encrypted: cannot project: {hidden} of {len(base)} pages are encrypted (key id "
                       f"{enc.get('key_id')}) and were not decrypted; give the key file (--keyfile, "
                       f"File > Key File...) to project the rows as the engine compresses them")
        if run.raw_models:    # the filesystem compresses what is on disk: the ciphertext, as it is
            raw_results(run, t, entry, codecs, fallocated=layout != "mysql" and current is None)
        return t
    pc = InnoDBPageCompressed(page_size=page_size, fs_block=fs_block, layout=layout)
    pc.stored_sizes = stored_sizes_exact(entry, base, current, layout, page_size)
    if pc.stored_sizes is not None:
        pc.stored_codec = current.name
    models: list[Model] = [pc]
    if 4096 <= page_size <= 16384:      # ROW_FORMAT=COMPRESSED exists for pages up to 16 KiB only
        models.append(InnoDBRowCompressedEstimate(page_size=page_size, key_block_size=page_size // 2,
                                                  clustered_index=clustered_index(base)))
    pairs = model_pairs(all_codecs, models, t.notes)
    fs = run.filesystem or (entry.fs.type if entry.fs is not None else filesystem_type(entry.abspath))

    def adjust(pr, est):
        if pr.model is pc and fs == "ext4":
            return shift(est, ext4_extent_tree_bytes(pr.partial_units + 1, fs_block))
        if isinstance(pr.model, InnoDBRowCompressedEstimate):
            return rfc_file_estimate(est, pr.model, index_shares(base), page_size, fs, fs_block)
        return est

    proj = run.project(base, pairs)
    speeds = measure_speeds(run, proj, all_codecs)
    add_results(t, proj, speeds, adjust)
    run.check()
    if run.larger_pages and page_size == 16384:
        # free pages are left out (the rebuild does not carry them over), and the system
        # pages each become one large page
        keep = ~kinds_in(base.kinds, _INNODB_SYSTEM_KINDS) & ~base.free \
            if base.kinds else None
        if keep is not None and keep.any():
            big = InnoDBLargerPagesApprox(page_size=page_size, fs_block=fs_block, layout=layout, factor=4)
            groups = grouped_units(base, 4, keep)
            gp = run.project(groups, model_pairs(all_codecs, [big], t.notes), count=False)
            # system pages (FSP header, inodes, bitmaps, free pages) each become one large page
            rest = grouped_units(base, 1, ~keep & ~base.free, pad_to=big.page_size)
            rp = run.project(rest, model_pairs(all_codecs, [big], t.notes), count=False) if len(rest) else None
            for (cname, mname), pr in gp.pairs.items():
                est = pr.estimate
                other = rp.pairs.get((cname, mname)) if rp is not None else None
                if other is not None:
                    est = combine([est, other.estimate])
                cs, ds = speeds.get(cname, (None, None))
                t.results.append(Result(cname, mname, est, cs, ds, rebuilds=True))
    if run.raw_models:
        # MariaDB extends tablespaces that are not page_compressed with posix_fallocate
        # (os0file.cc os_file_set_size; page_compressed ones sparse, by ftruncate)
        raw_results(run, t, entry, codecs, fallocated=layout != "mysql" and current is None)
    return t


# ---------------------------------------------------------------------------
# the engine's what-if
def _q(name: str | None) -> str:
    return f"`{name}`" if name else "`?`"


#: MariaDB 10.7+ loads these page-compression libraries as provider plugins (plugin/compression/,
#: Debian packages mariadb-plugin-provider-*); zlib is built in
PROVIDER_PLUGINS = {"lz4": "provider_lz4", "lzo": "provider_lzo", "lzma": "provider_lzma",
                    "bzip2": "provider_bzip2", "snappy": "provider_snappy"}


def provider_note(family: str) -> str:
    """The comment line a MariaDB page-compression DDL needs first when its library is a
    provider plugin (seen with a real MariaDB 10.11: without it, SET GLOBAL fails with
    "Variable 'innodb_compression_algorithm' can't be set to the value of 'lz4'"); "" for zlib."""
    plugin = PROVIDER_PLUGINS.get(family)
    if plugin is None:
        return ""
    return (f"-- MariaDB 10.7+ takes {family} from a provider plugin: if SHOW PLUGINS does not list {plugin}, "
            f"first INSTALL SONAME '{plugin}';\n")


#: a page-compressed file's cost per byte in the first pass, by its algorithm (a file of none: 1),
#: as measured on the benchmark set (2026-12-02: lzma 2.4 s, zlib and LZO ~0.5 s, bzip2 1 s
#: with its 64 KiB groups, lz4 and snappy ~0.1-0.2 s, a plain file 0.05-0.2 s, 54 MB each);
#: LZO through liblzo2 as lz4 (0.17 s against lz4's 0.13 s, session 17), 4 with the Python decoder
_CURRENT_CODEC_COST = {"lzma": 20.0, "bzip2": 8.0, "lzo": 1.5, "zlib": 4.0, "lz4": 1.5, "snappy": 1.5}
_LZO_PYTHON_COST = 4.0


class InnoDBWhatIf(WhatIfEngine):
    name = "innodb"

    def wants_file(self, entry: FileEntry) -> bool:
        return entry.role in TABLESPACE_ROLES and entry.units is not None and bool(len(entry.units))

    def file_target(self, run: Run, entry: FileEntry, codecs: list[Codec]) -> Target:
        return innodb_target(run, entry, codecs)

    def file_cost(self, entry: FileEntry) -> float:
        """The file's pages weighed by what its own codec costs a sampled page, re-encoded (lzma's
        encoder sets up an 8 MiB dictionary for every page) or decoded (LZO without liblzo2)."""
        sec = entry.sections.get("innodb", {}) or {}
        algo = str(sec.get("compression_algorithm") or "").lower() if sec.get("page_compressed") else ""
        cost = _CURRENT_CODEC_COST.get(algo, 1.0)
        if algo == "lzo":
            from dbxray.parsers.innodb.lzo import library_decoder
            cost = cost if library_decoder() is not None else _LZO_PYTHON_COST
        return float(entry.apparent_bytes or 0) * cost

    def advisable(self, target: Target) -> bool:
        """Tables only: never the system tablespace, undo or redo, the server's own schemas,
        or FULLTEXT auxiliary tables (the server manages those)."""
        info = target.info or {}
        if info.get("role", "tablespace") != "tablespace":
            return False
        if str(info.get("database") or "").lower() in SYSTEM_SCHEMAS:
            return False
        base = target.target.rsplit("/", 1)[-1]
        return not FTS_AUX.match(base) and not FTS_AUX.match(str(info.get("table") or ""))

    def rebuild_ddl(self, target: Target) -> str | None:
        """OPTIMIZE TABLE: for InnoDB the server runs it as a table rebuild (recreate + analyze,
        ``ALTER TABLE ... FORCE``: sql/sql_admin.cc, "Table does not support optimize, doing
        recreate + analyze instead"), which leaves the free pages and unwritten space behind."""
        info = target.info or {}
        return f"OPTIMIZE TABLE {_q(info.get('database'))}.{_q(info.get('table'))};"

    def available(self, codec: Codec, layout: str | None = None) -> bool:
        algos = MYSQL_ALGOS if layout == "mysql" else MARIADB_ALGOS
        return codec.family in algos or codec.family == "none"

    def ddl(self, target: Target, codec: Codec, model: str) -> str:
        info = target.info or {}
        table = f"{_q(info.get('database'))}.{_q(info.get('table'))}"
        if "row_compressed" in model:
            kbs = model.split("kbs")[1].split("k")[0] if "kbs" in model else "8"
            return f"ALTER TABLE {table} ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE={kbs};"
        if info.get("layout") == "mysql":
            if codec.family not in MYSQL_ALGOS | {"none"}:
                return f"-- {codec.name}: MySQL page compression has zlib and lz4 only; shown as a what-if only"
            algo = "none" if codec.family == "none" else codec.family
            return f"ALTER TABLE {table} COMPRESSION='{algo}'; OPTIMIZE TABLE {table};"
        if codec.family == "none":
            return f"ALTER TABLE {table} PAGE_COMPRESSED=0;"
        if codec.family not in MARIADB_ALGOS:
            return (f"-- {codec.name}: MariaDB/MySQL page compression has no {codec.family}; "
                    f"shown as a what-if only")
        level = f" PAGE_COMPRESSION_LEVEL={codec.level}" if codec.family in ("zlib", "lzma") and codec.level \
            else ""
        sql = (f"SET GLOBAL innodb_compression_algorithm='{codec.family}'; "
               f"ALTER TABLE {table} PAGE_COMPRESSED=1{level};")
        return provider_note(codec.family) + sql


WHATIF = InnoDBWhatIf()
