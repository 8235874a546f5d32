"""File segment inodes on FIL_PAGE_INODE pages.

Layout from ``storage/innobase/include/fsp0fsp.h``: FSEG_INODE_PAGE_NODE
(list node, 12 bytes) at FIL_PAGE_DATA, then FSEG_ARR_OFFSET = 50 the inode
array.  An inode: FSEG_ID (8), FSEG_NOT_FULL_N_USED (4), FSEG_FREE,
FSEG_NOT_FULL, FSEG_FULL (list bases, 16 each), FSEG_MAGIC_N (4,
97937874), FSEG_FRAG_ARR (FSP_EXTENT_SIZE / 2 slots of 4-byte page numbers,
FIL_NULL when empty).
"""
from __future__ import annotations

import struct

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .fil import FIL_NULL, FIL_PAGE_DATA
from .fsp import FLST_BASE_NODE_SIZE, FlstBase

FSEG_INODE_PAGE_NODE = FIL_PAGE_DATA
FLST_NODE_SIZE = 12
FSEG_ARR_OFFSET = FSEG_INODE_PAGE_NODE + FLST_NODE_SIZE   # 50
FSEG_ID = 0
FSEG_NOT_FULL_N_USED = 8
FSEG_FREE = 12
FSEG_NOT_FULL = FSEG_FREE + FLST_BASE_NODE_SIZE
FSEG_FULL = FSEG_NOT_FULL + FLST_BASE_NODE_SIZE
FSEG_MAGIC_N = FSEG_FULL + FLST_BASE_NODE_SIZE            # 60
FSEG_FRAG_ARR = FSEG_MAGIC_N + 4                           # 64
FSEG_FRAG_SLOT_SIZE = 4
FSEG_MAGIC_N_VALUE = 97937874
# FSEG header inside an index root page (fsp0fsp.h): space(4) page(4) offset(2)
FSEG_HDR_SIZE = 10


def fseg_inode_size(extent_pages: int) -> int:
    """FSEG_INODE_SIZE = FSEG_FRAG_ARR + FSEG_FRAG_ARR_N_SLOTS * 4."""
    return FSEG_FRAG_ARR + (extent_pages // 2) * FSEG_FRAG_SLOT_SIZE


def inodes_per_page(physical: int, extent_pages: int) -> int:
    """FSP_SEG_INODES_PER_PAGE = (physical - FSEG_ARR_OFFSET - 10) / FSEG_INODE_SIZE."""
    return (physical - FSEG_ARR_OFFSET - 10) // fseg_inode_size(extent_pages)


@dataclass
class Segment:
    """One used file segment inode."""

    seg_id: int
    inode_page: int
    inode_offset: int
    not_full_n_used: int
    free: FlstBase
    not_full: FlstBase
    full: FlstBase
    frag_pages: list[int] = field(default_factory=list)
    magic_ok: bool = True


@lru_cache(maxsize=8)
def _inode_struct(extent_pages: int) -> struct.Struct:
    """An inode as one struct: FSEG_ID, FSEG_NOT_FULL_N_USED, FSEG_FREE,
    FSEG_NOT_FULL, FSEG_FULL (FLST base nodes), FSEG_MAGIC_N, FSEG_FRAG_ARR."""
    st = struct.Struct(">QI" + "IIHIH" * 3 + f"I{extent_pages // 2}I")
    assert st.size == fseg_inode_size(extent_pages)
    return st


def parse_inode(buf: bytes, offset: int, extent_pages: int, inode_page: int = 0, inode_offset: int = 0) -> Segment | None:
    """Read one inode at ``offset``; None when the slot is unused (FSEG_ID 0)."""
    v = _inode_struct(extent_pages).unpack_from(buf, offset)
    if v[0] == 0:
        return None
    frags = [p for p in v[18:] if p != FIL_NULL]      # FSEG_FRAG_ARR_N_SLOTS = extent_pages / 2
    return Segment(v[0], inode_page, inode_offset, v[1], FlstBase(*v[2:7]), FlstBase(*v[7:12]),
                   FlstBase(*v[12:17]), frags, v[17] == FSEG_MAGIC_N_VALUE)


@lru_cache(maxsize=8)
def _id_dtype(size: int) -> np.dtype:
    """FSEG_ID of each inode slot of ``size`` bytes."""
    return np.dtype({"names": ["id"], "formats": [">u8"], "offsets": [FSEG_ID], "itemsize": size})


def parse_inode_page(buf: bytes, physical: int, extent_pages: int, page_no: int) -> list[Segment]:
    """All used inodes of one FIL_PAGE_INODE page (``buf`` is the page)."""
    size = fseg_inode_size(extent_pages)
    slots = inodes_per_page(physical, extent_pages)
    slots = max(0, min(slots, (len(buf) - FSEG_ARR_OFFSET) // size))
    if not slots:
        return []
    # used slots at once: FSEG_ID != 0 (an unused slot has id 0)
    ids = np.frombuffer(buf, dtype=_id_dtype(size), count=slots, offset=FSEG_ARR_OFFSET)["id"]
    used = ids.nonzero()[0].tolist()
    out = []
    for i in used:
        off = FSEG_ARR_OFFSET + i * size
        seg = parse_inode(buf, off, extent_pages, page_no, off)
        if seg is not None:
            out.append(seg)
    return out
