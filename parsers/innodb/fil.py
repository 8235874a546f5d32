"""FIL page header and trailer, and page types by the engines' constant names.

Offsets and type codes: MySQL ``storage/innobase/include/fil0types.h`` (8.0)
and MariaDB ``storage/innobase/include/fil0fil.h`` (10.11).  Every InnoDB
page starts with the 38-byte FIL header and (uncompressed pages) ends with
the 8-byte FIL trailer.  All multi-byte integers are big-endian.
"""
from __future__ import annotations

import functools
import struct

from dataclasses import dataclass

import numpy as np

# -- FIL header (fil0types.h) ------------------------------------------------
FIL_PAGE_SPACE_OR_CHKSUM = 0        # checksum (or space id in very old files)
FIL_PAGE_OFFSET = 4                 # page number
FIL_PAGE_PREV = 8                   # previous page in the B-tree level / list
FIL_PAGE_NEXT = 12
FIL_PAGE_LSN = 16                   # newest modification LSN
FIL_PAGE_TYPE = 24
FIL_PAGE_FILE_FLUSH_LSN = 26        # page 0 of ibdata1 only; MariaDB: key version
FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION = 26
FIL_PAGE_ARCH_LOG_NO_OR_SPACE_ID = 34
FIL_PAGE_SPACE_ID = 34
FIL_PAGE_DATA = 38                  # start of the page payload
FIL_PAGE_END_LSN_OLD_CHKSUM = 8     # trailer: old checksum (4) + low 32 bits of LSN (4)
FIL_PAGE_DATA_END = 8
FIL_NULL = 0xFFFFFFFF

# MariaDB full_crc32 (fil0fil.h): the checksum is the last 4 bytes of the page
FIL_PAGE_FCRC32_CHECKSUM = 4
FIL_PAGE_FCRC32_END_LSN = 8
FIL_PAGE_COMPRESS_FCRC32_MARKER = 15

# MySQL transparent page compression / encryption header (os/file.h,
# Compression::meta_t; fil0types.h FIL_PAGE_VERSION = FIL_PAGE_FILE_FLUSH_LSN)
FIL_PAGE_VERSION = FIL_PAGE_FILE_FLUSH_LSN
FIL_PAGE_ALGORITHM_V1 = FIL_PAGE_VERSION + 1
FIL_PAGE_ORIGINAL_TYPE_V1 = FIL_PAGE_ALGORITHM_V1 + 1
FIL_PAGE_ORIGINAL_SIZE_V1 = FIL_PAGE_ORIGINAL_TYPE_V1 + 2
FIL_PAGE_COMPRESS_SIZE_V1 = FIL_PAGE_ORIGINAL_SIZE_V1 + 2

# checksum field values (buf0checksum.h)
BUF_NO_CHECKSUM_MAGIC = 0xDEADBEEF

# -- page types (fil0types.h / fil0fil.h) -------------------------------------
FIL_PAGE_TYPE_ALLOCATED = 0
FIL_PAGE_TYPE_UNUSED = 1
FIL_PAGE_UNDO_LOG = 2
FIL_PAGE_INODE = 3
FIL_PAGE_IBUF_FREE_LIST = 4
FIL_PAGE_IBUF_BITMAP = 5
FIL_PAGE_TYPE_SYS = 6
FIL_PAGE_TYPE_TRX_SYS = 7
FIL_PAGE_TYPE_FSP_HDR = 8
FIL_PAGE_TYPE_XDES = 9
FIL_PAGE_TYPE_BLOB = 10
FIL_PAGE_TYPE_ZBLOB = 11
FIL_PAGE_TYPE_ZBLOB2 = 12
FIL_PAGE_TYPE_UNKNOWN = 13
FIL_PAGE_COMPRESSED = 14                 # MySQL transparent page compression
FIL_PAGE_ENCRYPTED = 15                  # MySQL
FIL_PAGE_COMPRESSED_AND_ENCRYPTED = 16   # MySQL
FIL_PAGE_ENCRYPTED_RTREE = 17            # MySQL
FIL_PAGE_SDI_BLOB = 18                   # MySQL 8
FIL_PAGE_TYPE_INSTANT = 18               # MariaDB: clustered root after instant ADD COLUMN
FIL_PAGE_SDI_ZBLOB = 19
FIL_PAGE_TYPE_LEGACY_DBLWR = 20
FIL_PAGE_TYPE_RSEG_ARRAY = 21
FIL_PAGE_TYPE_LOB_INDEX = 22
FIL_PAGE_TYPE_LOB_DATA = 23
FIL_PAGE_TYPE_LOB_FIRST = 24
FIL_PAGE_TYPE_ZLOB_FIRST = 25
FIL_PAGE_TYPE_ZLOB_DATA = 26
FIL_PAGE_TYPE_ZLOB_INDEX = 27
FIL_PAGE_TYPE_ZLOB_FRAG = 28
FIL_PAGE_TYPE_ZLOB_FRAG_ENTRY = 29
#: the MySQL 8 LOB page kinds (lob0first.h, lob0zip.h), and those that start a LOB
LOB_FIRST_TYPES = (FIL_PAGE_TYPE_LOB_FIRST, FIL_PAGE_TYPE_ZLOB_FIRST)
LOB_TYPES = (FIL_PAGE_TYPE_LOB_INDEX, FIL_PAGE_TYPE_LOB_DATA, FIL_PAGE_TYPE_LOB_FIRST,
             FIL_PAGE_TYPE_ZLOB_FIRST, FIL_PAGE_TYPE_ZLOB_DATA, FIL_PAGE_TYPE_ZLOB_INDEX,
             FIL_PAGE_TYPE_ZLOB_FRAG, FIL_PAGE_TYPE_ZLOB_FRAG_ENTRY)
FIL_PAGE_SDI = 17853
FIL_PAGE_RTREE = 17854
FIL_PAGE_INDEX = 17855
FIL_PAGE_PAGE_COMPRESSED = 34354             # MariaDB page_compressed, pre-full_crc32
FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED = 37401   # MariaDB

_COMMON = {
    FIL_PAGE_TYPE_ALLOCATED: "FIL_PAGE_TYPE_ALLOCATED",
    FIL_PAGE_TYPE_UNUSED: "FIL_PAGE_TYPE_UNUSED",
    FIL_PAGE_UNDO_LOG: "FIL_PAGE_UNDO_LOG",
    FIL_PAGE_INODE: "FIL_PAGE_INODE",
    FIL_PAGE_IBUF_FREE_LIST: "FIL_PAGE_IBUF_FREE_LIST",
    FIL_PAGE_IBUF_BITMAP: "FIL_PAGE_IBUF_BITMAP",
    FIL_PAGE_TYPE_SYS: "FIL_PAGE_TYPE_SYS",
    FIL_PAGE_TYPE_TRX_SYS: "FIL_PAGE_TYPE_TRX_SYS",
    FIL_PAGE_TYPE_FSP_HDR: "FIL_PAGE_TYPE_FSP_HDR",
    FIL_PAGE_TYPE_XDES: "FIL_PAGE_TYPE_XDES",
    FIL_PAGE_TYPE_BLOB: "FIL_PAGE_TYPE_BLOB",
    FIL_PAGE_TYPE_ZBLOB: "FIL_PAGE_TYPE_ZBLOB",
    FIL_PAGE_TYPE_ZBLOB2: "FIL_PAGE_TYPE_ZBLOB2",
    FIL_PAGE_TYPE_UNKNOWN: "FIL_PAGE_TYPE_UNKNOWN",
    FIL_PAGE_RTREE: "FIL_PAGE_RTREE",
    FIL_PAGE_INDEX: "FIL_PAGE_INDEX",
}

#: MySQL 5.7 / 8.x / 9.x names
MYSQL_PAGE_TYPES = dict(_COMMON)
MYSQL_PAGE_TYPES.update({
    FIL_PAGE_COMPRESSED: "FIL_PAGE_COMPRESSED",
    FIL_PAGE_ENCRYPTED: "FIL_PAGE_ENCRYPTED",
    FIL_PAGE_COMPRESSED_AND_ENCRYPTED: "FIL_PAGE_COMPRESSED_AND_ENCRYPTED",
    FIL_PAGE_ENCRYPTED_RTREE: "FIL_PAGE_ENCRYPTED_RTREE",
    FIL_PAGE_SDI_BLOB: "FIL_PAGE_SDI_BLOB",
    FIL_PAGE_SDI_ZBLOB: "FIL_PAGE_SDI_ZBLOB",
    FIL_PAGE_TYPE_LEGACY_DBLWR: "FIL_PAGE_TYPE_LEGACY_DBLWR",
    FIL_PAGE_TYPE_RSEG_ARRAY: "FIL_PAGE_TYPE_RSEG_ARRAY",
    FIL_PAGE_TYPE_LOB_INDEX: "FIL_PAGE_TYPE_LOB_INDEX",
    FIL_PAGE_TYPE_LOB_DATA: "FIL_PAGE_TYPE_LOB_DATA",
    FIL_PAGE_TYPE_LOB_FIRST: "FIL_PAGE_TYPE_LOB_FIRST",
    FIL_PAGE_TYPE_ZLOB_FIRST: "FIL_PAGE_TYPE_ZLOB_FIRST",
    FIL_PAGE_TYPE_ZLOB_DATA: "FIL_PAGE_TYPE_ZLOB_DATA",
    FIL_PAGE_TYPE_ZLOB_INDEX: "FIL_PAGE_TYPE_ZLOB_INDEX",
    FIL_PAGE_TYPE_ZLOB_FRAG: "FIL_PAGE_TYPE_ZLOB_FRAG",
    FIL_PAGE_TYPE_ZLOB_FRAG_ENTRY: "FIL_PAGE_TYPE_ZLOB_FRAG_ENTRY",
    FIL_PAGE_SDI: "FIL_PAGE_SDI",
})

#: MariaDB 10.x / 11.x names
MARIADB_PAGE_TYPES = dict(_COMMON)
MARIADB_PAGE_TYPES.update({
    FIL_PAGE_TYPE_INSTANT: "FIL_PAGE_TYPE_INSTANT",
    FIL_PAGE_PAGE_COMPRESSED: "FIL_PAGE_PAGE_COMPRESSED",
    FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED: "FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED",
})

#: pseudo kind for a page_compressed page whose payload could not be decoded
KIND_PAGE_COMPRESSED_UNDECODED = 0xFFFE
KIND_NAME_UNDECODED = "page_compressed (not decoded)"

#: B-tree page types (MariaDB counts FIL_PAGE_TYPE_INSTANT as an index page)
INDEX_TYPES_MYSQL = (FIL_PAGE_INDEX, FIL_PAGE_RTREE, FIL_PAGE_SDI)
INDEX_TYPES_MARIADB = (FIL_PAGE_INDEX, FIL_PAGE_RTREE, FIL_PAGE_TYPE_INSTANT)

MYSQL_ENCRYPTED_TYPES = (FIL_PAGE_ENCRYPTED, FIL_PAGE_COMPRESSED_AND_ENCRYPTED, FIL_PAGE_ENCRYPTED_RTREE)


def page_type_names(flavor: str) -> dict[int, str]:
    """Type code -> constant name for 'mysql' or 'mariadb'."""
    return MARIADB_PAGE_TYPES if flavor == "mariadb" else MYSQL_PAGE_TYPES


def page_type_name(code: int, flavor: str) -> str:
    return page_type_names(flavor).get(int(code), f"UNKNOWN_PAGE_TYPE_{int(code)}")


@dataclass
class FilHeader:
    """The 38-byte FIL header of one page."""

    checksum: int
    page_no: int
    prev: int
    next: int
    lsn: int
    page_type: int
    flush_lsn_or_key_version: int
    space_id: int


@dataclass
class FilTrailer:
    """The 8-byte FIL trailer: old-style checksum and the low 32 bits of the LSN."""

    old_checksum: int
    lsn_low32: int


# FIL_PAGE_SPACE_OR_CHKSUM, FIL_PAGE_OFFSET, FIL_PAGE_PREV, FIL_PAGE_NEXT, FIL_PAGE_LSN,
# FIL_PAGE_TYPE, FIL_PAGE_FILE_FLUSH_LSN (key version), FIL_PAGE_SPACE_ID (fil0types.h)
_FIL_HEADER = struct.Struct(">IIIIQHQI")


def parse_fil_header(buf: bytes, offset: int = 0) -> FilHeader:
    """Read the FIL header (fil0types.h) of the page starting at ``offset``."""
    if len(buf) < offset + FIL_PAGE_DATA:
        raise ValueError(f"FIL header needs {FIL_PAGE_DATA} bytes at offset {offset}, have {len(buf) - offset}")
    return FilHeader(*_FIL_HEADER.unpack_from(buf, offset))


def parse_fil_trailer(buf: bytes, offset: int, page_size: int) -> FilTrailer:
    """Read the FIL trailer (last 8 bytes) of the page of ``page_size`` at ``offset``."""
    end = offset + page_size
    if len(buf) < end:
        raise ValueError(f"page at offset {offset} is truncated")
    return FilTrailer(int.from_bytes(buf[end - 8:end - 4], "big"), int.from_bytes(buf[end - 4:end], "big"))


@functools.lru_cache(maxsize=64)
def header_dtype(page_size: int, with_trailer: bool = True) -> np.dtype:
    """A numpy record spanning one page that exposes the FIL header, INDEX page
    header and (optionally) FIL trailer fields, for vectorised reads over mmap."""
    names = ["checksum", "page_no", "prev", "next", "lsn", "type", "flush_lsn", "space_id",
             "n_dir_slots", "heap_top", "n_heap", "free", "garbage", "n_recs", "level", "index_id",
             "seg_leaf_space", "seg_leaf_page", "seg_leaf_offset",
             "seg_top_space", "seg_top_page", "seg_top_offset"]
    formats = [">u4", ">u4", ">u4", ">u4", ">u8", ">u2", ">u8", ">u4",
               ">u2", ">u2", ">u2", ">u2", ">u2", ">u2", ">u2", ">u8",
               ">u4", ">u4", ">u2", ">u4", ">u4", ">u2"]
    ph = FIL_PAGE_DATA   # PAGE_HEADER (page0types.h)
    offsets = [0, 4, 8, 12, 16, 24, 26, 34,
               ph + 0, ph + 2, ph + 4, ph + 6, ph + 8, ph + 16, ph + 26, ph + 28,
               ph + 36, ph + 40, ph + 44, ph + 46, ph + 50, ph + 54]
    if with_trailer:
        names += ["old_checksum", "end_lsn"]
        formats += [">u4", ">u4"]
        offsets += [page_size - 8, page_size - 4]
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": page_size})
