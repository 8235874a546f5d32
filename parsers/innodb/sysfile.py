"""Page access for the dictionary and system-file readers: FIL header fields,
FSP flags (MySQL and MariaDB encodings, just enough for the page size) and a
bounded page reader over :class:`parsers.fileio.ReadOnlyFile`.

This is deliberately small: the full page map lives in the page parser
(``fil.py`` / ``fsp.py``); the names and system readers only need single pages.
Constants are named as in storage/innobase/include/fil0types.h, fil0fil.h,
fsp0fsp.h and fsp0types.h (mysql/mysql-server, MariaDB/server).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ..fileio import FileReadError, ReadOnlyFile

# -- fil0types.h: FIL header -------------------------------------------------
FIL_PAGE_SPACE_OR_CHKSUM = 0
FIL_PAGE_OFFSET = 4
FIL_PAGE_PREV = 8
FIL_PAGE_NEXT = 12
FIL_PAGE_LSN = 16
FIL_PAGE_TYPE = 24
FIL_PAGE_FILE_FLUSH_LSN = 26
FIL_PAGE_ARCH_LOG_NO_OR_SPACE_ID = 34
FIL_PAGE_DATA = 38
FIL_NULL = 0xFFFFFFFF

# -- fil0fil.h: page types used here -------------------------------------------
FIL_PAGE_TYPE_ALLOCATED = 0
FIL_PAGE_UNDO_LOG = 2
FIL_PAGE_INODE = 3
FIL_PAGE_TYPE_SYS = 6
FIL_PAGE_TYPE_TRX_SYS = 7
FIL_PAGE_TYPE_FSP_HDR = 8
FIL_PAGE_TYPE_BLOB = 10
FIL_PAGE_COMPRESSED = 14                  # MySQL transparent page compression
FIL_PAGE_ENCRYPTED = 15
FIL_PAGE_COMPRESSED_AND_ENCRYPTED = 16
FIL_PAGE_ENCRYPTED_RTREE = 17
FIL_PAGE_SDI_BLOB = 18
FIL_PAGE_SDI_ZBLOB = 19
FIL_PAGE_TYPE_RSEG_ARRAY = 21
FIL_PAGE_SDI = 17853
FIL_PAGE_RTREE = 17854
FIL_PAGE_INDEX = 17855
FIL_PAGE_PAGE_COMPRESSED = 34354          # MariaDB
FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED = 37401  # MariaDB

ENCRYPTED_TYPES = (FIL_PAGE_ENCRYPTED, FIL_PAGE_COMPRESSED_AND_ENCRYPTED, FIL_PAGE_ENCRYPTED_RTREE,
                   FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED)

# -- fsp0fsp.h: FSP header on page 0 -------------------------------------------
FSP_HEADER_OFFSET = FIL_PAGE_DATA
FSP_SPACE_ID = 0
FSP_NOT_USED = 4
FSP_SIZE = 8
FSP_FREE_LIMIT = 12
FSP_SPACE_FLAGS = 16
FSP_FRAG_N_USED = 20
FSP_HEADER_SIZE = 32 + 5 * 16          # 32 + 5 * FLST_BASE_NODE_SIZE = 112
XDES_ARR_OFFSET = FSP_HEADER_OFFSET + FSP_HEADER_SIZE
XDES_BITMAP = 24                        # FLST_NODE_SIZE + 12
XDES_BITS_PER_PAGE = 2

# -- fsp0types.h: MySQL / MariaDB (non-full_crc32) flag fields -------------------
FSP_FLAGS_POS_ZIP_SSIZE = 1
FSP_FLAGS_POS_ATOMIC_BLOBS = 5
FSP_FLAGS_POS_PAGE_SSIZE = 6
FSP_FLAGS_POS_DATA_DIR = 10
FSP_FLAGS_POS_SHARED = 11               # MySQL
FSP_FLAGS_POS_TEMPORARY = 12            # MySQL
FSP_FLAGS_POS_ENCRYPTION = 13           # MySQL
FSP_FLAGS_POS_SDI = 14                  # MySQL 8
FSP_FLAGS_POS_PAGE_COMPRESSION = 16     # MariaDB (legacy page_compressed)
# MariaDB full_crc32 (fsp0types.h FSP_FLAGS_FCRC32_*)
FSP_FLAGS_FCRC32_POS_MARKER = 4
FSP_FLAGS_FCRC32_MASK_PAGE_SSIZE = 0xF
FSP_FLAGS_FCRC32_POS_COMPRESSED_ALGO = 5

UNIV_PAGE_SIZE_ORIG = 16384
UNIV_ZIP_SIZE_MIN = 1024

# dict0sdi / fsp0fsp.h: SDI version stored before the SDI root page number
SDI_VERSION = 1
# MySQL 8 Encryption::INFO_MAX_SIZE (os0enc.h): 3 magic + 4 key id + 36 uuid + 64 key/iv + 4 crc + 4
ENCRYPTION_INFO_MAX_SIZE = 115


class PageError(Exception):
    """A page could not be read or is not what was expected; names file and page."""

    def __init__(self, path: str, page_no: int | None, message: str):
        self.path = path
        self.page_no = page_no
        where = path if page_no is None else f"{path} page {page_no}"
        super().__init__(f"{where}: {message}")


@dataclass
class FilHeader:
    """The 38-byte FIL header at the start of every page (fil0types.h)."""

    checksum: int
    page_no: int
    prev: int
    next: int
    lsn: int
    page_type: int
    flush_lsn: int
    space_id: int


_FIL = struct.Struct(">IIIIQHQI")


def read_fil_header(page: bytes, offset: int = 0) -> FilHeader:
    """Read the FIL header (fil0types.h FIL_PAGE_*) at ``offset``."""
    if len(page) < offset + FIL_PAGE_DATA:
        raise ValueError("page shorter than the FIL header")
    return FilHeader(*_FIL.unpack_from(page, offset))


@dataclass
class SpaceFlags:
    """FSP_SPACE_FLAGS decoded for page sizes and the features the readers care about."""

    raw: int
    full_crc32: bool
    logical_page_size: int
    physical_page_size: int
    sdi: bool
    encrypted: bool
    page_compressed: bool
    shared: bool


def decode_space_flags(flags: int) -> SpaceFlags:
    """Decode FSP_SPACE_FLAGS (fsp0types.h) in the MariaDB full_crc32 or the MySQL/legacy layout."""
    if flags & (1 << FSP_FLAGS_FCRC32_POS_MARKER):
        ssize = flags & FSP_FLAGS_FCRC32_MASK_PAGE_SSIZE
        logical = (UNIV_ZIP_SIZE_MIN >> 1) << ssize if ssize else UNIV_PAGE_SIZE_ORIG
        return SpaceFlags(flags, True, logical, logical, False, False,
                          bool((flags >> FSP_FLAGS_FCRC32_POS_COMPRESSED_ALGO) & 7), False)
    zip_ssize = (flags >> FSP_FLAGS_POS_ZIP_SSIZE) & 0xF
    ssize = (flags >> FSP_FLAGS_POS_PAGE_SSIZE) & 0xF
    logical = (UNIV_ZIP_SIZE_MIN >> 1) << ssize if ssize else UNIV_PAGE_SIZE_ORIG
    physical = (UNIV_ZIP_SIZE_MIN >> 1) << zip_ssize if zip_ssize else logical
    return SpaceFlags(flags, False, logical, physical,
                      sdi=bool(flags & (1 << FSP_FLAGS_POS_SDI)),
                      encrypted=bool(flags & (1 << FSP_FLAGS_POS_ENCRYPTION)),
                      page_compressed=bool(flags & (1 << FSP_FLAGS_POS_PAGE_COMPRESSION)),
                      shared=bool(flags & (1 << FSP_FLAGS_POS_SHARED)))


def fsp_extent_size(logical_page_size: int) -> int:
    """FSP_EXTENT_SIZE (fsp0types.h): pages per extent for a logical page size."""
    if logical_page_size <= 16384:
        return 1048576 // logical_page_size
    if logical_page_size <= 32768:
        return 2097152 // logical_page_size
    return 4194304 // logical_page_size


def sdi_offset(logical_page_size: int, physical_page_size: int) -> int:
    """fsp_header_get_sdi_offset (fsp0fsp.cc): where SDI version and root page sit on page 0."""
    ext = fsp_extent_size(logical_page_size)
    xdes_size = XDES_BITMAP + (ext * XDES_BITS_PER_PAGE + 7) // 8
    return XDES_ARR_OFFSET + xdes_size * (physical_page_size // ext) + ENCRYPTION_INFO_MAX_SIZE


class SpaceFile:
    """One tablespace file opened read-only, read page by page.

    The page size comes from the FSP flags on page 0 unless given.  Every read
    is bounds-checked and raises :class:`PageError` naming file and page.
    """

    def __init__(self, path: str, display: str | None = None, page_size: int | None = None):
        self.path = path
        self.display = display or path
        try:
            self.f = ReadOnlyFile(path)
        except FileReadError as e:
            raise PageError(self.display, None, str(e).split(": ", 1)[-1]) from None
        self.flags: SpaceFlags | None = None
        self.space_id: int | None = None
        self.fsp_size: int | None = None
        head = self.f.pread(0, FIL_PAGE_DATA + FSP_HEADER_SIZE)
        if len(head) < FIL_PAGE_DATA + FSP_FRAG_N_USED:
            self.close()
            raise PageError(self.display, 0, f"file of {len(head)} bytes is too short for an FSP header")
        self.space_id, _unused, self.fsp_size, _free, raw = struct.unpack_from(
            ">IIIII", head, FSP_HEADER_OFFSET)
        self.flags = decode_space_flags(raw)
        if page_size:
            self.physical = self.logical = page_size
        else:
            self.logical = self.flags.logical_page_size
            self.physical = self.flags.physical_page_size
        if self.physical not in (1024, 2048, 4096, 8192, 16384, 32768, 65536):
            self.close()
            raise PageError(self.display, 0, f"FSP flags 0x{raw:x} give an impossible page size {self.physical}")
        self.n_pages = self.f.size // self.physical

    def close(self) -> None:
        self.f.close()

    def __enter__(self) -> "SpaceFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def page(self, page_no: int) -> bytes:
        """The physical bytes of one page (PageError when past the end or truncated)."""
        if page_no < 0 or page_no >= self.n_pages:
            raise PageError(self.display, page_no, f"page number outside the file ({self.n_pages} pages)")
        try:
            return self.f.read_exact(page_no * self.physical, self.physical)
        except FileReadError as e:
            raise PageError(self.display, page_no, str(e).split(": ", 1)[-1]) from None

    def page_types(self):
        """FIL_PAGE_TYPE of every page as a numpy array (one strided read over the map)."""
        import numpy as np
        if self.n_pages == 0:
            return np.zeros(0, dtype=">u2")
        arr = self.f.array(np.uint8, 0, self.n_pages * self.physical).reshape(self.n_pages, self.physical)
        return (arr[:, FIL_PAGE_TYPE].astype(np.uint16) << 8) | arr[:, FIL_PAGE_TYPE + 1]
