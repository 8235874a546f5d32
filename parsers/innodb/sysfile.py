"""Page access for the dictionary and system-file readers: a bounded page
reader over :class:`parsers.fileio.ReadOnlyFile` whose page size comes from
page 0's FSP flags, and where MySQL 8 keeps the SDI root (fsp0fsp.cc).

The FIL header, page types and FSP flags are read by the page parser's own
readers (``fil.py``, ``fsp.py``): one reader per structure.
"""
from __future__ import annotations

import struct

from ..fileio import FileReadError, ReadOnlyFile
from .fil import FIL_PAGE_DATA, FIL_PAGE_TYPE
from .fsp import FSP_FRAG_N_USED, FSP_HEADER_OFFSET, FSP_HEADER_SIZE, FspFlags, decode_fsp_flags, extent_size_pages
from .xdes import XDES_ARR_OFFSET, xdes_size

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


def sdi_offset(logical_page_size: int, physical_page_size: int) -> int:
    """fsp_header_get_sdi_offset (fsp0fsp.cc): where SDI version and root page sit on page 0."""
    ext = extent_size_pages(logical_page_size)
    return XDES_ARR_OFFSET + xdes_size(ext) * (physical_page_size // ext) + ENCRYPTION_INFO_MAX_SIZE


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
        self.flags: FspFlags | None = None
        self.space_id: int | None = None
        self.fsp_size: int | None = None
        head = self.f.pread(0, FIL_PAGE_DATA + FSP_HEADER_SIZE)
        if len(head) < FIL_PAGE_DATA + FSP_FRAG_N_USED:
            self.close()
            raise PageError(self.display, 0, f"file of {len(head)} bytes is too short for an FSP header")
        self.space_id, _unused, self.fsp_size, _free, raw = struct.unpack_from(
            ">IIIII", head, FSP_HEADER_OFFSET)
        self.flags = decode_fsp_flags(raw)
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
