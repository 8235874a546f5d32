"""Extent descriptors (XDES entries) on page 0 and every FIL_PAGE_TYPE_XDES page.

Layout from ``storage/innobase/include/fsp0fsp.h`` (MySQL and MariaDB):
the descriptor array starts at XDES_ARR_OFFSET = FSP_HEADER_OFFSET +
FSP_HEADER_SIZE (150); one descriptor page every physical-page-size pages
describes the next physical-page-size pages.  An entry is XDES_ID (owning
segment, 8), XDES_FLST_NODE (12), XDES_STATE (4), XDES_BITMAP (2 bits per
page: XDES_FREE_BIT, XDES_CLEAN_BIT).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .fil import FIL_PAGE_DATA
from .fsp import FSP_HEADER_SIZE

XDES_ARR_OFFSET = FIL_PAGE_DATA + FSP_HEADER_SIZE   # 150
XDES_ID = 0
XDES_FLST_NODE = 8
XDES_STATE = 20
XDES_BITMAP = 24
XDES_BITS_PER_PAGE = 2
XDES_FREE_BIT = 0
XDES_CLEAN_BIT = 1

XDES_NOT_INITED = 0   # MariaDB name; MySQL: XDES_NOT_INITED too (8.0)
XDES_FREE = 1
XDES_FREE_FRAG = 2
XDES_FULL_FRAG = 3
XDES_FSEG = 4
XDES_FSEG_FRAG = 5    # MySQL 8
XDES_STATE_NAMES = {0: "not_inited", 1: "free", 2: "free_frag", 3: "full_frag", 4: "fseg", 5: "fseg_frag"}


def xdes_size(extent_pages: int) -> int:
    """XDES_SIZE = XDES_BITMAP + ceil(extent * 2 bits / 8)."""
    return XDES_BITMAP + (extent_pages * XDES_BITS_PER_PAGE + 7) // 8


@dataclass
class XdesEntry:
    """One extent descriptor."""

    seg_id: int
    state: int
    free_bits: list[int]      # 1 = page free, per page of the extent

    @property
    def state_name(self) -> str:
        return XDES_STATE_NAMES.get(self.state, f"state {self.state}")


def parse_xdes_entry(buf: bytes, offset: int, extent_pages: int) -> XdesEntry:
    """Read one XDES entry at ``offset``."""
    seg = int.from_bytes(buf[offset + XDES_ID:offset + XDES_ID + 8], "big")
    state = int.from_bytes(buf[offset + XDES_STATE:offset + XDES_STATE + 4], "big")
    bm = buf[offset + XDES_BITMAP:offset + xdes_size(extent_pages)]
    bits = [(bm[(i * 2) // 8] >> ((i * 2) % 8)) & 1 for i in range(extent_pages)]
    return XdesEntry(seg, state, bits)


@dataclass
class ExtentMap:
    """Per extent and per page facts from every descriptor page of a file."""

    extent_pages: int
    seg_id: np.ndarray        # u8 per extent
    state: np.ndarray         # u4 per extent
    page_free: np.ndarray     # bool per page (XDES_FREE_BIT, or the extent is free / not initialised)
    page_seg: np.ndarray      # u8 per page: owning segment id of FSEG extents, 0 otherwise


@lru_cache(maxsize=8)
def _entry_dtype(size: int) -> np.dtype:
    """An XDES entry's XDES_ID and XDES_STATE as big-endian fields."""
    return np.dtype({"names": ["id", "state"], "formats": [">u8", ">u4"],
                     "offsets": [XDES_ID, XDES_STATE], "itemsize": size})


def read_extent_map(pages: np.ndarray, n_pages: int, physical: int, extent_pages: int,
                    free_limit: int, readable: np.ndarray | None = None) -> ExtentMap:
    """Vectorised read of the descriptors of all ``n_pages``.

    ``pages`` is the file as an (n_pages, physical) uint8 view.  Descriptor
    pages are page numbers 0, physical, 2*physical, ...; ``readable`` marks
    descriptor pages that may be read (False: missing / corrupt).
    """
    per_page = physical // extent_pages
    size = xdes_size(extent_pages)
    n_ext = (n_pages + extent_pages - 1) // extent_pages
    seg = np.zeros(n_ext, dtype=np.uint64)
    state = np.zeros(n_ext, dtype=np.uint32)
    bitmap = np.zeros((n_ext, size - XDES_BITMAP), dtype=np.uint8)
    for d in range(0, n_pages, physical):
        if readable is not None and not readable[d]:
            continue
        first = d // extent_pages
        count = min(per_page, n_ext - first)
        if count <= 0:
            break
        flat = pages[d, XDES_ARR_OFFSET:XDES_ARR_OFFSET + count * size]
        entries = flat.view(_entry_dtype(size))
        seg[first:first + count] = entries["id"]
        state[first:first + count] = entries["state"]
        bitmap[first:first + count] = flat.reshape(count, size)[:, XDES_BITMAP:]
    # per extent first, then spread over its pages: XDES_BITMAP holds 2 bits per
    # page, low bit first (XDES_FREE_BIT = bit 0 of each pair)
    bits = np.unpackbits(bitmap, axis=1, bitorder="little")[:, XDES_FREE_BIT:2 * extent_pages:XDES_BITS_PER_PAGE]
    ext_free = (state == XDES_FREE) | (state == XDES_NOT_INITED) | (state > XDES_FSEG_FRAG)
    ext_fseg = (state == XDES_FSEG) | (state == XDES_FSEG_FRAG)
    page_free = np.logical_or(bits.view(bool), ext_free[:, None]).reshape(-1)[:n_pages]    # bits are 0/1
    if free_limit < n_pages:
        page_free[max(free_limit, 0):] = True
    page_seg = np.where(ext_fseg, seg, np.uint64(0)).repeat(extent_pages)[:n_pages]
    return ExtentMap(extent_pages, seg, state, page_free, page_seg)
