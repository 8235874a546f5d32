"""INDEX page header (B-tree and R-tree pages, also SDI pages).

Layout from ``storage/innobase/include/page0page.h`` / ``page0types.h``:
PAGE_HEADER = FIL_PAGE_DATA (38); fields PAGE_N_DIR_SLOTS 0, PAGE_HEAP_TOP 2,
PAGE_N_HEAP 4 (bit 15 = compact format), PAGE_FREE 6, PAGE_GARBAGE 8,
PAGE_LAST_INSERT 10, PAGE_DIRECTION 12, PAGE_N_DIRECTION 14, PAGE_N_RECS 16,
PAGE_MAX_TRX_ID 18, PAGE_LEVEL 26, PAGE_INDEX_ID 28, PAGE_BTR_SEG_LEAF 36,
PAGE_BTR_SEG_TOP 46; PAGE_DATA = PAGE_HEADER + 56 = 94.  Data size and the
free space of an empty page as page_get_data_size() and
page_get_free_space_of_empty() compute them.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .fil import FIL_PAGE_DATA

PAGE_HEADER = FIL_PAGE_DATA
PAGE_N_DIR_SLOTS = 0
PAGE_HEAP_TOP = 2
PAGE_N_HEAP = 4
PAGE_FREE = 6
PAGE_GARBAGE = 8
PAGE_LAST_INSERT = 10
PAGE_DIRECTION = 12
PAGE_N_DIRECTION = 14
PAGE_N_RECS = 16
PAGE_MAX_TRX_ID = 18
PAGE_LEVEL = 26
PAGE_INDEX_ID = 28
PAGE_BTR_SEG_LEAF = 36
PAGE_BTR_SEG_TOP = 46
PAGE_DATA = PAGE_HEADER + 36 + 2 * 10            # 94
PAGE_NEW_INFIMUM = PAGE_DATA + 5                 # 99
PAGE_NEW_SUPREMUM = PAGE_DATA + 2 * 5 + 8        # 112
PAGE_NEW_SUPREMUM_END = PAGE_NEW_SUPREMUM + 8    # 120
PAGE_OLD_INFIMUM = PAGE_DATA + 1 + 6             # 101
PAGE_OLD_SUPREMUM = PAGE_DATA + 2 + 2 * 6 + 8    # 116
PAGE_OLD_SUPREMUM_END = PAGE_OLD_SUPREMUM + 9    # 125
PAGE_DIR = 8                                     # FIL_PAGE_DATA_END
PAGE_DIR_SLOT_SIZE = 2
PAGE_HEAP_NO_COMPACT = 0x8000


@dataclass
class FsegHeader:
    """An FSEG header (space, inode page, byte offset of the inode)."""

    space: int
    page_no: int
    offset: int


@dataclass
class IndexHeader:
    """The INDEX page header."""

    n_dir_slots: int
    heap_top: int
    n_heap: int
    compact: bool
    free: int
    garbage: int
    last_insert: int
    direction: int
    n_direction: int
    n_recs: int
    max_trx_id: int
    level: int
    index_id: int
    btr_seg_leaf: FsegHeader
    btr_seg_top: FsegHeader

    @property
    def supremum_end(self) -> int:
        return PAGE_NEW_SUPREMUM_END if self.compact else PAGE_OLD_SUPREMUM_END

    @property
    def data_size(self) -> int:
        """page_get_data_size: heap top - supremum end - garbage."""
        return self.heap_top - self.supremum_end - self.garbage


def parse_index_header(buf: bytes, offset: int = 0) -> IndexHeader:
    """Read the INDEX page header of the page starting at ``offset``."""
    o = offset + PAGE_HEADER
    if len(buf) < o + 56:
        raise ValueError(f"INDEX page header needs 56 bytes at offset {o}")

    def u(a: int, n: int) -> int:
        return int.from_bytes(buf[o + a:o + a + n], "big")

    n_heap = u(PAGE_N_HEAP, 2)
    return IndexHeader(
        n_dir_slots=u(PAGE_N_DIR_SLOTS, 2), heap_top=u(PAGE_HEAP_TOP, 2), n_heap=n_heap & 0x7FFF,
        compact=bool(n_heap & PAGE_HEAP_NO_COMPACT), free=u(PAGE_FREE, 2), garbage=u(PAGE_GARBAGE, 2),
        last_insert=u(PAGE_LAST_INSERT, 2), direction=u(PAGE_DIRECTION, 2), n_direction=u(PAGE_N_DIRECTION, 2),
        n_recs=u(PAGE_N_RECS, 2), max_trx_id=u(PAGE_MAX_TRX_ID, 8), level=u(PAGE_LEVEL, 2),
        index_id=u(PAGE_INDEX_ID, 8),
        btr_seg_leaf=FsegHeader(u(PAGE_BTR_SEG_LEAF, 4), u(PAGE_BTR_SEG_LEAF + 4, 4), u(PAGE_BTR_SEG_LEAF + 8, 2)),
        btr_seg_top=FsegHeader(u(PAGE_BTR_SEG_TOP, 4), u(PAGE_BTR_SEG_TOP + 4, 4), u(PAGE_BTR_SEG_TOP + 8, 2)))


def free_space_of_empty(logical_page_size: int, compact) -> np.ndarray | int:
    """page_get_free_space_of_empty: usable bytes of an empty page."""
    sup = np.where(compact, PAGE_NEW_SUPREMUM_END, PAGE_OLD_SUPREMUM_END)
    return logical_page_size - sup - PAGE_DIR - 2 * PAGE_DIR_SLOT_SIZE


def data_size(heap_top: np.ndarray, n_heap: np.ndarray, garbage: np.ndarray,
              compact: np.ndarray | None = None) -> np.ndarray:
    """Vectorised page_get_data_size (int32, may be negative for garbage headers):
    heap top - garbage - the supremum's end of the page's format (``compact``: the
    PAGE_HEAP_NO_COMPACT bit of the u16 ``n_heap``, when the caller has it)."""
    if compact is None:
        compact = n_heap >= PAGE_HEAP_NO_COMPACT       # the top bit of a u16
    ds = heap_top.astype(np.int32)
    ds -= garbage
    ds -= np.where(compact, np.int32(PAGE_NEW_SUPREMUM_END), np.int32(PAGE_OLD_SUPREMUM_END))
    return ds


@functools.lru_cache(maxsize=8)
def empty_free_space(logical_page_size: int) -> tuple[float, float]:
    """page_get_free_space_of_empty of a REDUNDANT and of a COMPACT page."""
    return (float(free_space_of_empty(logical_page_size, False)),
            float(free_space_of_empty(logical_page_size, True)))


def fill_ratio(heap_top: np.ndarray, n_heap: np.ndarray, garbage: np.ndarray, logical_page_size: int,
               ds: np.ndarray | None = None, compact: np.ndarray | None = None) -> np.ndarray:
    """Used fraction of each page: data size / free space of an empty page, 0..1, as
    float32 (``ds``: data_size() of the same pages, ``compact`` their format bits, when
    the caller has them).  Divided in float32: both operands are integers below 2^24,
    exact there, and the float32 quotient is the float64 one rounded to float32 (a
    double quotient's rounding to float is innocuous), so the figures are the same."""
    if compact is None:
        compact = n_heap >= PAGE_HEAP_NO_COMPACT
    if ds is None:
        ds = data_size(heap_top, n_heap, garbage, compact)
    cap_old, cap_new = empty_free_space(logical_page_size)
    fill = ds.astype(np.float32)
    fill /= np.where(compact, np.float32(cap_new), np.float32(cap_old))
    np.maximum(fill, np.float32(0.0), out=fill)          # np.clip, without its per-call overhead
    np.minimum(fill, np.float32(1.0), out=fill)
    return fill


def page_regions(hdr: IndexHeader, logical_page_size: int) -> list[tuple[int, int, str]]:
    """Byte regions of an INDEX page for the hex view."""
    dir_start = logical_page_size - PAGE_DIR - hdr.n_dir_slots * PAGE_DIR_SLOT_SIZE
    top = min(max(hdr.heap_top, PAGE_DATA), logical_page_size - PAGE_DIR)
    dir_start = min(max(dir_start, top), logical_page_size - PAGE_DIR)
    return [(0, FIL_PAGE_DATA, "FIL header"), (PAGE_HEADER, PAGE_DATA, "page header"),
            (PAGE_DATA, top, "records"), (top, dir_start, "free space"),
            (dir_start, logical_page_size - PAGE_DIR, "page directory"),
            (logical_page_size - PAGE_DIR, logical_page_size, "FIL trailer")]
