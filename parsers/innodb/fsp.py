"""FSP header (page 0 of every tablespace) and FSP flags in the MySQL and
MariaDB encodings.

Sources: MySQL ``storage/innobase/include/fsp0types.h`` / ``fsp0fsp.h``;
MariaDB ``storage/innobase/include/fsp0types.h`` (full_crc32 flags, the
PAGE_COMPRESSION bit 16) and ``fil0fil.h`` (``fil_space_t::full_crc32``).
"""
from __future__ import annotations

import functools
import struct

from dataclasses import dataclass, asdict

from .fil import FIL_PAGE_DATA

FSP_HEADER_OFFSET = FIL_PAGE_DATA
# FSP header fields (fsp0fsp.h), relative to FSP_HEADER_OFFSET
FSP_SPACE_ID = 0
FSP_NOT_USED = 4
FSP_SIZE = 8
FSP_FREE_LIMIT = 12
FSP_SPACE_FLAGS = 16
FSP_FRAG_N_USED = 20
FSP_FREE = 24
FLST_BASE_NODE_SIZE = 16
FSP_FREE_FRAG = FSP_FREE + FLST_BASE_NODE_SIZE
FSP_FULL_FRAG = FSP_FREE_FRAG + FLST_BASE_NODE_SIZE
FSP_SEG_ID = FSP_FULL_FRAG + FLST_BASE_NODE_SIZE
FSP_SEG_INODES_FULL = FSP_SEG_ID + 8
FSP_SEG_INODES_FREE = FSP_SEG_INODES_FULL + FLST_BASE_NODE_SIZE
FSP_HEADER_SIZE = 32 + 5 * FLST_BASE_NODE_SIZE     # 112

# -- FSP flags, MySQL and MariaDB non-full_crc32 layout (fsp0types.h) --------
FSP_FLAGS_POS_POST_ANTELOPE = 0
FSP_FLAGS_POS_ZIP_SSIZE = 1          # 4 bits
FSP_FLAGS_POS_ATOMIC_BLOBS = 5
FSP_FLAGS_POS_PAGE_SSIZE = 6         # 4 bits
FSP_FLAGS_POS_DATA_DIR = 10          # MySQL
FSP_FLAGS_POS_SHARED = 11            # MySQL
FSP_FLAGS_POS_TEMPORARY = 12         # MySQL
FSP_FLAGS_POS_ENCRYPTION = 13        # MySQL
FSP_FLAGS_POS_SDI = 14               # MySQL 8
FSP_FLAGS_POS_PAGE_COMPRESSION = 16  # MariaDB: FSP_FLAGS_POS_RESERVED(10) + width 6
# -- MariaDB full_crc32 layout -----------------------------------------------
FSP_FLAGS_FCRC32_POS_PAGE_SSIZE = 0  # 4 bits
FSP_FLAGS_FCRC32_POS_MARKER = 4
FSP_FLAGS_FCRC32_POS_COMPRESSED_ALGO = 5   # 3 bits
FSP_FLAGS_FCRC32_MASK_MARKER = 1 << FSP_FLAGS_FCRC32_POS_MARKER

UNIV_PAGE_SIZE_ORIG = 16384
UNIV_ZIP_SIZE_MIN = 1024

# MariaDB page compression algorithms (fsp0pagecompress.h / innodb_compression_algorithm)
PAGE_UNCOMPRESSED = 0
PAGE_ZLIB_ALGORITHM = 1
PAGE_LZ4_ALGORITHM = 2
PAGE_LZO_ALGORITHM = 3
PAGE_LZMA_ALGORITHM = 4
PAGE_BZIP2_ALGORITHM = 5
PAGE_SNAPPY_ALGORITHM = 6
MARIADB_ALGORITHMS = {0: "none", 1: "zlib", 2: "lz4", 3: "lzo", 4: "lzma", 5: "bzip2", 6: "snappy"}
# MySQL Compression::Type (os/file.h)
MYSQL_ALGORITHMS = {0: "none", 1: "zlib", 2: "lz4"}


def ssize_to_size(ssize: int) -> int:
    """Page size from a shift size: 1 -> 1 KiB ... 7 -> 64 KiB (fsp0types.h)."""
    return (UNIV_ZIP_SIZE_MIN >> 1) << ssize


@dataclass(frozen=True)
class FspFlags:
    """Decoded FSP_SPACE_FLAGS."""

    raw: int
    format: str                # "full_crc32" | "mysql" | "mariadb"
    logical_page_size: int
    physical_page_size: int
    zip_size: int              # 0 unless ROW_FORMAT=COMPRESSED
    page_compressed: bool
    compression_algorithm: str | None   # full_crc32 only stores it; None when unknown
    post_antelope: bool = False
    atomic_blobs: bool = False
    encryption: bool = False
    sdi: bool = False
    shared: bool = False
    temporary: bool = False
    data_dir: bool = False
    valid: bool = True
    problem: str = ""

    @property
    def full_crc32(self) -> bool:
        return self.format == "full_crc32"

    def to_dict(self) -> dict:
        return asdict(self)


def decode_fsp_flags(flags: int) -> FspFlags:
    """Decode FSP_SPACE_FLAGS in the MariaDB full_crc32 or the MySQL/MariaDB layout."""
    return _decode_fsp_flags(flags & 0xFFFFFFFF)


@functools.lru_cache(maxsize=256)
def _decode_fsp_flags(flags: int) -> FspFlags:
    if flags & FSP_FLAGS_FCRC32_MASK_MARKER:
        # MariaDB full_crc32 (fil_space_t::full_crc32); in the other layout bit 4
        # is the top bit of ZIP_SSIZE, which can never exceed 5
        ssize = (flags >> FSP_FLAGS_FCRC32_POS_PAGE_SSIZE) & 0xF
        algo = (flags >> FSP_FLAGS_FCRC32_POS_COMPRESSED_ALGO) & 0x7
        valid = 3 <= ssize <= 7 and algo <= PAGE_SNAPPY_ALGORITHM and not flags >> 8
        size = ssize_to_size(ssize) if 3 <= ssize <= 7 else UNIV_PAGE_SIZE_ORIG
        return FspFlags(flags, "full_crc32", size, size, 0, algo != 0,
                        MARIADB_ALGORITHMS.get(algo, f"algorithm {algo}"), valid=valid,
                        problem="" if valid else f"invalid full_crc32 FSP flags 0x{flags:x}")
    zip_ssize = (flags >> FSP_FLAGS_POS_ZIP_SSIZE) & 0xF
    page_ssize = (flags >> FSP_FLAGS_POS_PAGE_SSIZE) & 0xF
    logical = UNIV_PAGE_SIZE_ORIG if page_ssize == 0 else ssize_to_size(page_ssize)
    zip_size = ssize_to_size(zip_ssize) if zip_ssize else 0
    page_compressed = bool(flags >> FSP_FLAGS_POS_PAGE_COMPRESSION & 1)
    mariadb = page_compressed
    problems = []
    if page_ssize and not 3 <= page_ssize <= 7:
        problems.append(f"page_ssize {page_ssize}")
    if zip_ssize > 5 or (zip_size and zip_size > logical):
        problems.append(f"zip_ssize {zip_ssize}")
    if (zip_ssize or flags & (1 << FSP_FLAGS_POS_ATOMIC_BLOBS)) and not flags & 1:
        problems.append("ATOMIC_BLOBS/ZIP_SSIZE without POST_ANTELOPE")
    if flags >> 17:
        problems.append("unknown high bits")
    ff = FspFlags(
        raw=flags, format="mariadb" if mariadb else "mysql", logical_page_size=logical,
        physical_page_size=zip_size or logical, zip_size=zip_size, page_compressed=page_compressed,
        compression_algorithm=None,
        post_antelope=bool(flags & 1), atomic_blobs=bool(flags >> FSP_FLAGS_POS_ATOMIC_BLOBS & 1),
        data_dir=bool(flags >> FSP_FLAGS_POS_DATA_DIR & 1), shared=bool(flags >> FSP_FLAGS_POS_SHARED & 1),
        temporary=bool(flags >> FSP_FLAGS_POS_TEMPORARY & 1),
        encryption=bool(flags >> FSP_FLAGS_POS_ENCRYPTION & 1), sdi=bool(flags >> FSP_FLAGS_POS_SDI & 1),
        valid=not problems, problem=("invalid FSP flags 0x%x: " % flags + ", ".join(problems)) if problems else "")
    return ff


@dataclass
class FlstBase:
    """A file list base node: length, first and last (page, byte offset)."""

    length: int
    first_page: int
    first_offset: int
    last_page: int
    last_offset: int


@dataclass
class FspHeader:
    """The FSP header at FSP_HEADER_OFFSET of page 0."""

    space_id: int
    size_pages: int
    free_limit: int
    flags: int
    frag_n_used: int
    free: FlstBase
    free_frag: FlstBase
    full_frag: FlstBase
    seg_id_next: int
    seg_inodes_full: FlstBase
    seg_inodes_free: FlstBase


# FLST_BASE_NODE (fut0lst.h): FLST_LEN(4), FLST_FIRST (page 4, boffset 2), FLST_LAST (6)
_FLST_BASE = struct.Struct(">IIHIH")
# the FSP header (fsp0fsp.h): FSP_SPACE_ID, FSP_NOT_USED, FSP_SIZE, FSP_FREE_LIMIT,
# FSP_SPACE_FLAGS, FSP_FRAG_N_USED, FSP_FREE, FSP_FREE_FRAG, FSP_FULL_FRAG,
# FSP_SEG_ID (8), FSP_SEG_INODES_FULL, FSP_SEG_INODES_FREE
_FSP_HEADER = struct.Struct(">6I" + "IIHIH" * 3 + "Q" + "IIHIH" * 2)
assert _FSP_HEADER.size == FSP_HEADER_SIZE


def parse_flst_base(buf: bytes, offset: int) -> FlstBase:
    """Read an FLST_BASE_NODE (fut0lst.h): len(4) first(page 4, boffset 2) last(6)."""
    return FlstBase(*_FLST_BASE.unpack_from(buf, offset))


def parse_fsp_header(buf: bytes, offset: int = 0) -> FspHeader:
    """Read the FSP header of the page 0 that starts at ``offset``."""
    o = offset + FSP_HEADER_OFFSET
    if len(buf) < o + FSP_HEADER_SIZE:
        raise ValueError(f"FSP header needs {FSP_HEADER_SIZE} bytes at offset {o}")
    v = _FSP_HEADER.unpack_from(buf, o)
    return FspHeader(
        space_id=v[0], size_pages=v[2], free_limit=v[3], flags=v[4], frag_n_used=v[5],
        free=FlstBase(*v[6:11]), free_frag=FlstBase(*v[11:16]), full_frag=FlstBase(*v[16:21]),
        seg_id_next=v[21], seg_inodes_full=FlstBase(*v[22:27]), seg_inodes_free=FlstBase(*v[27:32]))


def extent_size_pages(logical_page_size: int) -> int:
    """FSP_EXTENT_SIZE: 1 MiB extents up to 16k pages, 64 pages above (fsp0types.h)."""
    if logical_page_size <= 16384:
        return (1 << 20) // logical_page_size
    return 64
