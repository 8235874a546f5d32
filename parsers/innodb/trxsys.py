"""System pages of ibdata1 and of undo tablespaces: TRX_SYS (rollback segment
slots, binlog info, doublewrite buffer location), rollback segment headers,
undo log page states and MySQL 8 RSEG_ARRAY pages.

Offsets and magic numbers are named as in storage/innobase/include/trx0sys.h,
trx0rseg.h, trx0undo.h and trx0purge.h (mysql/mysql-server, MariaDB/server).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .fil import (FIL_NULL, FIL_PAGE_DATA, FIL_PAGE_TYPE_RSEG_ARRAY, FIL_PAGE_TYPE_SYS, FIL_PAGE_TYPE_TRX_SYS,
                  FIL_PAGE_UNDO_LOG)
from .fil import parse_fil_header as read_fil_header
from .fsp import extent_size_pages as fsp_extent_size
from .sysfile import PageError, SpaceFile

FSEG_PAGE_DATA = FIL_PAGE_DATA
FSEG_HEADER_SIZE = 10
FLST_BASE_NODE_SIZE = 16
FLST_NODE_SIZE = 12

# -- fsp0types.h ---------------------------------------------------------------
FSP_TRX_SYS_PAGE_NO = 5
FSP_FIRST_RSEG_PAGE_NO = 6

# -- trx0sys.h -----------------------------------------------------------------
TRX_SYS = FSEG_PAGE_DATA
TRX_SYS_TRX_ID_STORE = 0
TRX_SYS_FSEG_HEADER = 8
TRX_SYS_RSEGS = 8 + FSEG_HEADER_SIZE
TRX_SYS_RSEG_SPACE = 0
TRX_SYS_RSEG_PAGE_NO = 4
TRX_SYS_RSEG_SLOT_SIZE = 8
TRX_SYS_N_RSEGS = 128
TRX_SYS_MYSQL_LOG_MAGIC_N = 873422344
TRX_SYS_MYSQL_LOG_INFO_FROM_END = 1000          # TRX_SYS_MYSQL_LOG_INFO = page size - 1000
TRX_SYS_MYSQL_LOG_MAGIC_N_FLD = 0
TRX_SYS_MYSQL_LOG_OFFSET_HIGH = 4
TRX_SYS_MYSQL_LOG_OFFSET_LOW = 8
TRX_SYS_MYSQL_LOG_NAME = 12
TRX_SYS_MYSQL_LOG_NAME_LEN = 512
TRX_SYS_DOUBLEWRITE_FROM_END = 200              # TRX_SYS_DOUBLEWRITE = page size - 200
TRX_SYS_DOUBLEWRITE_FSEG = 0
TRX_SYS_DOUBLEWRITE_MAGIC = FSEG_HEADER_SIZE
TRX_SYS_DOUBLEWRITE_BLOCK1 = 4 + FSEG_HEADER_SIZE
TRX_SYS_DOUBLEWRITE_BLOCK2 = 8 + FSEG_HEADER_SIZE
TRX_SYS_DOUBLEWRITE_REPEAT = 12
TRX_SYS_DOUBLEWRITE_SPACE_ID_STORED = 24 + FSEG_HEADER_SIZE
TRX_SYS_DOUBLEWRITE_MAGIC_N = 536853855
TRX_SYS_DOUBLEWRITE_SPACE_ID_STORED_N = 1783657386

# -- trx0rseg.h ----------------------------------------------------------------
TRX_RSEG = FSEG_PAGE_DATA
TRX_RSEG_MAX_SIZE = 0              # MariaDB 10.3+: TRX_RSEG_FORMAT
TRX_RSEG_HISTORY_SIZE = 4
TRX_RSEG_HISTORY = 8
TRX_RSEG_FSEG_HEADER = 8 + FLST_BASE_NODE_SIZE
TRX_RSEG_UNDO_SLOTS = 8 + FLST_BASE_NODE_SIZE + FSEG_HEADER_SIZE
TRX_RSEG_SLOT_SIZE = 4


def trx_rseg_n_slots(page_size: int) -> int:
    """TRX_RSEG_N_SLOTS (trx0rseg.h): UNIV_PAGE_SIZE / 16."""
    return page_size // 16


# -- trx0undo.h ----------------------------------------------------------------
TRX_UNDO_PAGE_HDR = FSEG_PAGE_DATA
TRX_UNDO_PAGE_TYPE = 0
TRX_UNDO_PAGE_START = 2
TRX_UNDO_PAGE_FREE = 4
TRX_UNDO_PAGE_NODE = 6
TRX_UNDO_PAGE_HDR_SIZE = 6 + FLST_NODE_SIZE
TRX_UNDO_SEG_HDR = TRX_UNDO_PAGE_HDR + TRX_UNDO_PAGE_HDR_SIZE
TRX_UNDO_STATE = 0
TRX_UNDO_ACTIVE = 1
TRX_UNDO_CACHED = 2
TRX_UNDO_TO_FREE = 3               # MySQL (insert undo logs)
TRX_UNDO_TO_PURGE = 4
TRX_UNDO_PREPARED = 5
UNDO_STATE_NAMES = {TRX_UNDO_ACTIVE: "active", TRX_UNDO_CACHED: "cached", TRX_UNDO_TO_FREE: "to_free",
                    TRX_UNDO_TO_PURGE: "to_purge", TRX_UNDO_PREPARED: "prepared"}

# -- trx0purge.h: MySQL 8 undo tablespace RSEG_ARRAY page --------------------------
RSEG_ARRAY_HEADER = FIL_PAGE_DATA
RSEG_ARRAY_VERSION = 0x52534547 + 1          # 'RSEG' + 1
RSEG_ARRAY_VERSION_OFFSET = 0
RSEG_ARRAY_SIZE_OFFSET = 4
RSEG_ARRAY_FSEG_HEADER_OFFSET = 8
RSEG_ARRAY_PAGES_OFFSET = 8 + FSEG_HEADER_SIZE
RSEG_ARRAY_SLOT_SIZE = 4
RSEG_ARRAY_RESERVED_BYTES = 200
FSP_MAX_ROLLBACK_SEGMENTS = 128
UNDO_INDEX_PAGE_NO = 3             # page of the RSEG_ARRAY in an undo tablespace (fsp0types.h FSP_RSEG_ARRAY_PAGE_NO)


@dataclass
class FsegHeader:
    """A file segment header (fsp0fsp.h FSEG_HDR_SPACE, FSEG_HDR_PAGE_NO, FSEG_HDR_OFFSET)."""

    space: int
    page_no: int
    offset: int


def read_fseg_header(page: bytes, offset: int) -> FsegHeader:
    """Read a 10-byte FSEG header at ``offset``."""
    return FsegHeader(*struct.unpack_from(">IIH", page, offset))


@dataclass
class RsegSlot:
    """One used rollback segment slot of TRX_SYS (or of an RSEG_ARRAY page)."""

    slot: int
    space: int
    page_no: int


@dataclass
class Doublewrite:
    """The doublewrite buffer description on the TRX_SYS page."""

    magic_ok: bool
    block1: int
    block2: int
    repeat_ok: bool
    space_id_stored: bool
    fseg: FsegHeader
    block_size: int                 # TRX_SYS_DOUBLEWRITE_BLOCK_SIZE = FSP_EXTENT_SIZE pages

    def to_json(self) -> dict:
        return {"magic_ok": self.magic_ok, "block1": self.block1, "block2": self.block2,
                "repeat_ok": self.repeat_ok, "space_id_stored": self.space_id_stored,
                "pages_per_block": self.block_size,
                "fseg": self.fseg.__dict__}


@dataclass
class TrxSys:
    """The TRX_SYS header page (page 5 of ibdata1)."""

    trx_id_store: int
    fseg: FsegHeader
    rsegs: list[RsegSlot]
    binlog_name: str | None
    binlog_offset: int | None
    doublewrite: Doublewrite | None

    def to_json(self) -> dict:
        return {"trx_id_store": self.trx_id_store, "fseg": self.fseg.__dict__,
                "rollback_segments": [[s.slot, s.space, s.page_no] for s in self.rsegs],
                "binlog": None if self.binlog_name is None else
                {"name": self.binlog_name, "offset": self.binlog_offset},
                "doublewrite": None if self.doublewrite is None else self.doublewrite.to_json()}


def read_trx_sys(page: bytes, page_size: int, offset: int = 0) -> TrxSys:
    """Read the TRX_SYS page (trx0sys.h TRX_SYS_*): rollback segment slots, binlog info, doublewrite."""
    base = offset + TRX_SYS
    trx_id = struct.unpack_from(">Q", page, base + TRX_SYS_TRX_ID_STORE)[0]
    fseg = read_fseg_header(page, base + TRX_SYS_FSEG_HEADER)
    rsegs = []
    for i in range(TRX_SYS_N_RSEGS):
        o = base + TRX_SYS_RSEGS + i * TRX_SYS_RSEG_SLOT_SIZE
        space, page_no = struct.unpack_from(">II", page, o)
        if page_no != FIL_NULL and not (space == 0 and page_no == 0):
            rsegs.append(RsegSlot(i, space, page_no))
    li = offset + page_size - TRX_SYS_MYSQL_LOG_INFO_FROM_END
    name = off = None
    if struct.unpack_from(">I", page, li + TRX_SYS_MYSQL_LOG_MAGIC_N_FLD)[0] == TRX_SYS_MYSQL_LOG_MAGIC_N:
        hi, lo = struct.unpack_from(">II", page, li + TRX_SYS_MYSQL_LOG_OFFSET_HIGH)
        off = (hi << 32) | lo
        raw = page[li + TRX_SYS_MYSQL_LOG_NAME:li + TRX_SYS_MYSQL_LOG_NAME + TRX_SYS_MYSQL_LOG_NAME_LEN]
        name = raw.split(b"\0", 1)[0].decode("utf-8", "replace")
    dw = offset + page_size - TRX_SYS_DOUBLEWRITE_FROM_END
    magic, b1, b2 = struct.unpack_from(">III", page, dw + TRX_SYS_DOUBLEWRITE_MAGIC)
    r_magic, r_b1, r_b2 = struct.unpack_from(">III", page, dw + TRX_SYS_DOUBLEWRITE_MAGIC + TRX_SYS_DOUBLEWRITE_REPEAT)
    doublewrite = None
    if magic == TRX_SYS_DOUBLEWRITE_MAGIC_N or r_magic == TRX_SYS_DOUBLEWRITE_MAGIC_N:
        stored = struct.unpack_from(">I", page, dw + TRX_SYS_DOUBLEWRITE_SPACE_ID_STORED)[0]
        doublewrite = Doublewrite(
            magic_ok=magic == TRX_SYS_DOUBLEWRITE_MAGIC_N, block1=b1, block2=b2,
            repeat_ok=(magic, b1, b2) == (r_magic, r_b1, r_b2),
            space_id_stored=stored == TRX_SYS_DOUBLEWRITE_SPACE_ID_STORED_N,
            fseg=read_fseg_header(page, dw + TRX_SYS_DOUBLEWRITE_FSEG),
            block_size=fsp_extent_size(page_size))
    return TrxSys(trx_id, fseg, rsegs, name, off, doublewrite)


@dataclass
class RsegHeader:
    """A rollback segment header page (trx0rseg.h TRX_RSEG_*)."""

    page_no: int
    max_size_or_format: int
    history_size: int
    history_len: int
    undo_slots: list[int]           # page numbers of the used undo slots

    def to_json(self) -> dict:
        return {"page_no": self.page_no, "max_size_or_format": self.max_size_or_format,
                "history_size": self.history_size, "history_len": self.history_len,
                "undo_slots_used": len(self.undo_slots)}


def read_rseg_header(page: bytes, page_size: int, page_no: int = 0, offset: int = 0) -> RsegHeader:
    """Read a rollback segment header page (trx0rseg.h) and its undo slot array."""
    base = offset + TRX_RSEG
    max_size, hist_size = struct.unpack_from(">II", page, base + TRX_RSEG_MAX_SIZE)
    hist_len = struct.unpack_from(">I", page, base + TRX_RSEG_HISTORY)[0]     # FLST_LEN
    n = trx_rseg_n_slots(page_size)
    slots = struct.unpack_from(f">{n}I", page, base + TRX_RSEG_UNDO_SLOTS)
    used = [p for p in slots if p != FIL_NULL]
    return RsegHeader(page_no, max_size, hist_size, hist_len, used)


@dataclass
class RsegArray:
    """The RSEG_ARRAY page of a MySQL 8 undo tablespace (trx0purge.h)."""

    version_ok: bool
    size: int
    fseg: FsegHeader
    rseg_pages: list[int]


def read_rseg_array(page: bytes, page_size: int, offset: int = 0) -> RsegArray:
    """Read an RSEG_ARRAY page (trx0purge.h RSEG_ARRAY_*): the rollback segment header pages."""
    base = offset + RSEG_ARRAY_HEADER
    version, size = struct.unpack_from(">II", page, base + RSEG_ARRAY_VERSION_OFFSET)
    fseg = read_fseg_header(page, base + RSEG_ARRAY_FSEG_HEADER_OFFSET)
    n_max = min(FSP_MAX_ROLLBACK_SEGMENTS,
                (page_size - RSEG_ARRAY_HEADER - RSEG_ARRAY_PAGES_OFFSET - RSEG_ARRAY_RESERVED_BYTES)
                // RSEG_ARRAY_SLOT_SIZE)
    pages = []
    for i in range(n_max):
        p = struct.unpack_from(">I", page, base + RSEG_ARRAY_PAGES_OFFSET + i * RSEG_ARRAY_SLOT_SIZE)[0]
        if p != FIL_NULL and p != 0:
            pages.append(p)
    return RsegArray(version == RSEG_ARRAY_VERSION, size, fseg, pages)


@dataclass
class UndoSummary:
    """Undo log pages of one file counted by the state in their segment header."""

    pages: int = 0
    states: dict[str, int] = field(default_factory=dict)
    page_types: dict[int, int] = field(default_factory=dict)


def undo_state_of(page: bytes, offset: int = 0) -> int:
    """TRX_UNDO_STATE of an undo page's segment header (trx0undo.h TRX_UNDO_SEG_HDR)."""
    return struct.unpack_from(">H", page, offset + TRX_UNDO_SEG_HDR + TRX_UNDO_STATE)[0]


def summarize_undo(space: SpaceFile, max_pages: int | None = None) -> UndoSummary:
    """Count FIL_PAGE_UNDO_LOG pages and their TRX_UNDO_STATE as innochecksum -S does.

    Vectorised: the state and page-type fields of every undo page are read as one
    strided numpy gather over the file map, no Python loop per page."""
    import numpy as np
    s = UndoSummary()
    types = space.page_types()
    idx = np.nonzero(types == FIL_PAGE_UNDO_LOG)[0]
    if max_pages is not None:
        idx = idx[:max_pages]
    if idx.size == 0:
        return s
    arr = space.f.array(np.uint8, 0, space.n_pages * space.physical).reshape(space.n_pages, space.physical)
    so = TRX_UNDO_SEG_HDR + TRX_UNDO_STATE
    to = TRX_UNDO_PAGE_HDR + TRX_UNDO_PAGE_TYPE
    states = (arr[idx, so].astype(np.uint16) << 8) | arr[idx, so + 1]
    ptypes = (arr[idx, to].astype(np.uint16) << 8) | arr[idx, to + 1]
    for v, c in zip(*np.unique(states, return_counts=True)):
        name = UNDO_STATE_NAMES.get(int(v), "other")
        s.states[name] = s.states.get(name, 0) + int(c)
    for v, c in zip(*np.unique(ptypes, return_counts=True)):
        s.page_types[int(v)] = int(c)
    s.pages = int(idx.size)
    return s


def _rseg_json(space: SpaceFile, page_no: int, errors: list[str]) -> dict | None:
    try:
        page = space.page(page_no)
    except PageError as e:
        errors.append(str(e))
        return None
    fil = read_fil_header(page)
    if fil.page_type != FIL_PAGE_TYPE_SYS:
        errors.append(f"{space.display} page {page_no}: rollback segment header has page type "
                      f"{fil.page_type}, expected FIL_PAGE_TYPE_SYS")
        return None
    return read_rseg_header(page, space.physical, page_no).to_json()


def _rseg_totals(space: SpaceFile, pages: list[int], errors: list[str]) -> dict:
    """Read the rollback segment headers on ``pages`` and sum their history and used undo slots."""
    read = [j for j in (_rseg_json(space, p, errors) for p in pages) if j is not None]
    return {"count": len(read), "history_len": sum(j["history_len"] for j in read),
            "history_size": sum(j["history_size"] for j in read),
            "undo_slots_used": sum(j["undo_slots_used"] for j in read)}


def system_tablespace_info(space: SpaceFile, errors: list[str]) -> dict:
    """TRX_SYS, doublewrite, rollback segments in this file and undo page states of ibdata1."""
    out: dict = {}
    try:
        page = space.page(FSP_TRX_SYS_PAGE_NO)
    except PageError as e:
        errors.append(str(e))
        return out
    fil = read_fil_header(page)
    if not any(page):
        errors.append(f"{space.display} page {FSP_TRX_SYS_PAGE_NO}: TRX_SYS page is all zeros")
        return out
    if fil.page_type != FIL_PAGE_TYPE_TRX_SYS:
        errors.append(f"{space.display} page {FSP_TRX_SYS_PAGE_NO}: page type {fil.page_type}, "
                      f"expected FIL_PAGE_TYPE_TRX_SYS")
        return out
    ts = read_trx_sys(page, space.physical)
    out["trx_sys"] = ts.to_json()
    out["doublewrite"] = out["trx_sys"].pop("doublewrite")
    out["rollback_segment_headers"] = _rseg_totals(
        space, [s.page_no for s in ts.rsegs if s.space == (space.space_id or 0)], errors)
    u = summarize_undo(space)
    out["undo"] = {"pages": u.pages, "states": u.states,
                   "rollback_segments_in_undo_tablespaces": sum(1 for s in ts.rsegs
                                                                if s.space != (space.space_id or 0))}
    return out


def undo_tablespace_info(space: SpaceFile, errors: list[str]) -> dict:
    """An undo tablespace: RSEG_ARRAY (MySQL 8) and its rollback segment headers, undo page states."""
    out: dict = {"kind": "undo_tablespace", "space_id": space.space_id, "page_size": space.physical,
                 "pages": space.n_pages}
    try:
        page = space.page(UNDO_INDEX_PAGE_NO)
        fil = read_fil_header(page)
        if fil.page_type == FIL_PAGE_TYPE_RSEG_ARRAY:
            arr = read_rseg_array(page, space.physical)
            if not arr.version_ok:
                errors.append(f"{space.display} page {UNDO_INDEX_PAGE_NO}: RSEG_ARRAY version mismatch")
            out["rseg_array"] = {"version_ok": arr.version_ok, "rseg_pages": arr.rseg_pages}
            out["rollback_segment_headers"] = _rseg_totals(space, arr.rseg_pages, errors)
        else:
            out["rseg_array"] = None      # MariaDB / 5.7 undo tablespaces: rsegs listed in TRX_SYS
    except PageError as e:
        errors.append(str(e))
    u = summarize_undo(space)
    out["undo"] = {"pages": u.pages, "states": u.states}
    return out
