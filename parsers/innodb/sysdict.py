"""The InnoDB data dictionary inside ibdata1 (MariaDB, MySQL 5.7 and older).

The dictionary header page (page 7, DICT_HDR) holds the latest ids and the
root pages of SYS_TABLES, SYS_COLUMNS, SYS_INDEXES and SYS_FIELDS; those
B-trees are walked from their roots and their REDUNDANT-format records are
decoded into dataclasses.  Field numbers, header offsets and index ids are
named as in storage/innobase/include/dict0boot.h (MariaDB/server and
mysql/mysql-server 5.7).  MySQL 8.0+ keeps its dictionary in mysql.ibd (SDI,
see :mod:`sdi`); its ibdata1 still has a DICT_HDR page but no SYS_* trees.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from . import records as rec
from .fil import FIL_PAGE_DATA, FIL_PAGE_INDEX, FIL_PAGE_TYPE_SYS
from .fil import parse_fil_header as read_fil_header
from .sysfile import PageError, SpaceFile

# -- dict0boot.h / fsp0types.h ---------------------------------------------------
FSP_DICT_HDR_PAGE_NO = 7
DICT_HDR_SPACE = 0
DICT_HDR_PAGE_NO = FSP_DICT_HDR_PAGE_NO
DICT_HDR = FIL_PAGE_DATA               # FSEG_PAGE_DATA
DICT_HDR_ROW_ID = 0
DICT_HDR_TABLE_ID = 8
DICT_HDR_INDEX_ID = 16
DICT_HDR_MAX_SPACE_ID = 24
DICT_HDR_MIX_ID_LOW = 28
DICT_HDR_TABLES = 32
DICT_HDR_TABLE_IDS = 36
DICT_HDR_COLUMNS = 40
DICT_HDR_INDEXES = 44
DICT_HDR_FIELDS = 48
DICT_HDR_FSEG_HEADER = 56

DICT_TABLES_ID = 1
DICT_COLUMNS_ID = 2
DICT_INDEXES_ID = 3
DICT_FIELDS_ID = 4
DICT_TABLE_IDS_ID = 5

# field numbers of the clustered index records (dict0boot.h dict_fld_sys_*_enum)
DICT_FLD__SYS_TABLES__NAME = 0
DICT_FLD__SYS_TABLES__ID = 3
DICT_FLD__SYS_TABLES__N_COLS = 4
DICT_FLD__SYS_TABLES__TYPE = 5
DICT_FLD__SYS_TABLES__MIX_ID = 6
DICT_FLD__SYS_TABLES__MIX_LEN = 7
DICT_FLD__SYS_TABLES__CLUSTER_ID = 8
DICT_FLD__SYS_TABLES__SPACE = 9
DICT_NUM_FIELDS__SYS_TABLES = 10

DICT_FLD__SYS_COLUMNS__TABLE_ID = 0
DICT_FLD__SYS_COLUMNS__POS = 1
DICT_FLD__SYS_COLUMNS__NAME = 4
DICT_FLD__SYS_COLUMNS__MTYPE = 5
DICT_FLD__SYS_COLUMNS__PRTYPE = 6
DICT_FLD__SYS_COLUMNS__LEN = 7
DICT_FLD__SYS_COLUMNS__PREC = 8
DICT_NUM_FIELDS__SYS_COLUMNS = 9

DICT_FLD__SYS_INDEXES__TABLE_ID = 0
DICT_FLD__SYS_INDEXES__ID = 1
DICT_FLD__SYS_INDEXES__NAME = 4
DICT_FLD__SYS_INDEXES__N_FIELDS = 5
DICT_FLD__SYS_INDEXES__TYPE = 6
DICT_FLD__SYS_INDEXES__SPACE = 7
DICT_FLD__SYS_INDEXES__PAGE_NO = 8
DICT_FLD__SYS_INDEXES__MERGE_THRESHOLD = 9
DICT_NUM_FIELDS__SYS_INDEXES = 10

DICT_FLD__SYS_FIELDS__INDEX_ID = 0
DICT_FLD__SYS_FIELDS__POS = 1
DICT_FLD__SYS_FIELDS__COL_NAME = 4
DICT_NUM_FIELDS__SYS_FIELDS = 5

#: dict0mem.h: the high bit of SYS_TABLES.N_COLS marks ROW_FORMAT other than REDUNDANT
DICT_N_COLS_COMPACT = 0x80000000
#: dict0mem.h: dict_table_t::flags as stored in SYS_TABLES.TYPE
DICT_TF_POS_COMPACT = 0
DICT_TF_POS_ZIP_SSIZE = 1
DICT_TF_WIDTH_ZIP_SSIZE = 4
DICT_TF_POS_ATOMIC_BLOBS = 5
#: data0type.h: DB_ROW_ID, DB_TRX_ID, DB_ROLL_PTR are added to every table's columns
DATA_N_SYS_COLS = 3

#: The hard-coded system tables (dict0boot.cc dict_boot creates them, they have no SYS_TABLES row)
SYSTEM_INDEXES = {
    DICT_TABLES_ID: ("SYS_TABLES", "CLUST_IND"),
    DICT_COLUMNS_ID: ("SYS_COLUMNS", "CLUST_IND"),
    DICT_INDEXES_ID: ("SYS_INDEXES", "CLUST_IND"),
    DICT_FIELDS_ID: ("SYS_FIELDS", "CLUST_IND"),
    DICT_TABLE_IDS_ID: ("SYS_TABLES", "ID_IND"),
}


class DictError(Exception):
    """The dictionary could not be read; names file and page."""


@dataclass
class DictHeader:
    """The dictionary header (dict0boot.h DICT_HDR_*) on page 7 of ibdata1."""

    row_id: int
    table_id: int
    index_id: int
    max_space_id: int
    mix_id_low: int
    tables_root: int
    table_ids_root: int
    columns_root: int
    indexes_root: int
    fields_root: int
    fseg_space: int
    fseg_page_no: int
    fseg_offset: int

    def to_json(self) -> dict:
        return dict(self.__dict__)


_DICT_HDR = struct.Struct(">QQQIIIIIII")


def read_dict_header(page: bytes, offset: int = 0) -> DictHeader:
    """Read DICT_HDR (dict0boot.h) from the dictionary header page at ``offset``."""
    base = offset + DICT_HDR
    if len(page) < base + DICT_HDR_FSEG_HEADER + 10:
        raise DictError(f"dictionary header page too short ({len(page) - offset} bytes)")
    vals = _DICT_HDR.unpack_from(page, base)
    fseg = struct.unpack_from(">IIH", page, base + DICT_HDR_FSEG_HEADER)
    return DictHeader(*vals, *fseg)


@dataclass
class SysTable:
    """One SYS_TABLES row."""

    name: str
    id: int
    n_cols_raw: int
    type: int
    mix_id: int
    mix_len: int
    space: int

    @property
    def n_cols(self) -> int:
        """User columns (low 16 bits of N_COLS; the high bits carry virtual columns and the compact flag)."""
        return self.n_cols_raw & 0xFFFF

    @property
    def n_v_cols(self) -> int:
        return (self.n_cols_raw >> 16) & 0x7FFF

    @property
    def compact(self) -> bool:
        return bool(self.n_cols_raw & DICT_N_COLS_COMPACT)

    @property
    def zip_ssize(self) -> int:
        return (self.type >> DICT_TF_POS_ZIP_SSIZE) & ((1 << DICT_TF_WIDTH_ZIP_SSIZE) - 1)

    @property
    def zip_page_size(self) -> int:
        """ROW_FORMAT=COMPRESSED page size (512 << zip_ssize), 0 when not compressed."""
        return 512 << self.zip_ssize if self.zip_ssize else 0

    @property
    def row_format(self) -> str:
        """Redundant / Compact / Dynamic / Compressed from N_COLS and TYPE (dict0mem.h DICT_TF_*)."""
        if not self.compact:
            return "Redundant"
        if self.zip_ssize:
            return "Compressed"
        if self.type & (1 << DICT_TF_POS_ATOMIC_BLOBS):
            return "Dynamic"
        return "Compact"


@dataclass
class SysIndex:
    """One SYS_INDEXES row."""

    table_id: int
    id: int
    name: str
    n_fields: int
    type: int
    space: int
    page_no: int
    merge_threshold: int | None


@dataclass
class SysColumn:
    """One SYS_COLUMNS row."""

    table_id: int
    pos: int
    name: str
    mtype: int
    prtype: int
    len: int
    prec: int


@dataclass
class SysField:
    """One SYS_FIELDS row."""

    index_id: int
    pos: int
    col_name: str


@dataclass
class Dictionary:
    """What the SYS_* B-trees of one ibdata1 hold (delete-marked rows skipped)."""

    header: DictHeader | None = None
    tables: list[SysTable] = field(default_factory=list)
    indexes: list[SysIndex] = field(default_factory=list)
    columns: list[SysColumn] = field(default_factory=list)
    fields: list[SysField] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    deleted_rows: int = 0
    #: False when DICT_HDR has no SYS_* roots (MySQL 8.0+: the dictionary is in mysql.ibd)
    has_sys_tables: bool = False

    def table_by_id(self) -> dict[int, SysTable]:
        return {t.id: t for t in self.tables}


def _u(rec_: rec.Record, page: bytes, i: int, width: int) -> int:
    v = rec_.value(page, i)
    if v is None or len(v) != width:
        raise rec.RecordError(f"field {i} is {'NULL' if v is None else f'{len(v)} bytes'}, expected {width} bytes")
    return int.from_bytes(v, "big")


def _s(rec_: rec.Record, page: bytes, i: int) -> str:
    v = rec_.value(page, i)
    if v is None:
        return ""
    return v.decode("utf-8", "replace")


def parse_sys_tables_record(page: bytes, origin: int) -> SysTable:
    """Decode one SYS_TABLES clustered-index leaf record (REDUNDANT) at ``origin``."""
    r = rec.read_old_record(page, origin)
    if len(r.fields) < DICT_NUM_FIELDS__SYS_TABLES:
        raise rec.RecordError(f"SYS_TABLES record with {len(r.fields)} fields")
    return SysTable(
        name=_s(r, page, DICT_FLD__SYS_TABLES__NAME),
        id=_u(r, page, DICT_FLD__SYS_TABLES__ID, 8),
        n_cols_raw=_u(r, page, DICT_FLD__SYS_TABLES__N_COLS, 4),
        type=_u(r, page, DICT_FLD__SYS_TABLES__TYPE, 4),
        mix_id=_u(r, page, DICT_FLD__SYS_TABLES__MIX_ID, 8),
        mix_len=_u(r, page, DICT_FLD__SYS_TABLES__MIX_LEN, 4),
        space=_u(r, page, DICT_FLD__SYS_TABLES__SPACE, 4))


def parse_sys_indexes_record(page: bytes, origin: int) -> SysIndex:
    """Decode one SYS_INDEXES clustered-index leaf record (REDUNDANT) at ``origin``."""
    r = rec.read_old_record(page, origin)
    if len(r.fields) < DICT_NUM_FIELDS__SYS_INDEXES - 1:
        raise rec.RecordError(f"SYS_INDEXES record with {len(r.fields)} fields")
    mt = None
    if len(r.fields) > DICT_FLD__SYS_INDEXES__MERGE_THRESHOLD and not r.fields[
            DICT_FLD__SYS_INDEXES__MERGE_THRESHOLD].null:
        mt = _u(r, page, DICT_FLD__SYS_INDEXES__MERGE_THRESHOLD, 4)
    return SysIndex(
        table_id=_u(r, page, DICT_FLD__SYS_INDEXES__TABLE_ID, 8),
        id=_u(r, page, DICT_FLD__SYS_INDEXES__ID, 8),
        name=_s(r, page, DICT_FLD__SYS_INDEXES__NAME),
        n_fields=_u(r, page, DICT_FLD__SYS_INDEXES__N_FIELDS, 4),
        type=_u(r, page, DICT_FLD__SYS_INDEXES__TYPE, 4),
        space=_u(r, page, DICT_FLD__SYS_INDEXES__SPACE, 4),
        page_no=_u(r, page, DICT_FLD__SYS_INDEXES__PAGE_NO, 4),
        merge_threshold=mt)


def parse_sys_columns_record(page: bytes, origin: int) -> SysColumn:
    """Decode one SYS_COLUMNS clustered-index leaf record (REDUNDANT) at ``origin``."""
    r = rec.read_old_record(page, origin)
    if len(r.fields) < DICT_NUM_FIELDS__SYS_COLUMNS:
        raise rec.RecordError(f"SYS_COLUMNS record with {len(r.fields)} fields")
    return SysColumn(
        table_id=_u(r, page, DICT_FLD__SYS_COLUMNS__TABLE_ID, 8),
        pos=_u(r, page, DICT_FLD__SYS_COLUMNS__POS, 4),
        name=_s(r, page, DICT_FLD__SYS_COLUMNS__NAME),
        mtype=_u(r, page, DICT_FLD__SYS_COLUMNS__MTYPE, 4),
        prtype=_u(r, page, DICT_FLD__SYS_COLUMNS__PRTYPE, 4),
        len=_u(r, page, DICT_FLD__SYS_COLUMNS__LEN, 4),
        prec=_u(r, page, DICT_FLD__SYS_COLUMNS__PREC, 4))


def parse_sys_fields_record(page: bytes, origin: int) -> SysField:
    """Decode one SYS_FIELDS clustered-index leaf record (REDUNDANT) at ``origin``."""
    r = rec.read_old_record(page, origin)
    if len(r.fields) < DICT_NUM_FIELDS__SYS_FIELDS:
        raise rec.RecordError(f"SYS_FIELDS record with {len(r.fields)} fields")
    return SysField(
        index_id=_u(r, page, DICT_FLD__SYS_FIELDS__INDEX_ID, 8),
        pos=_u(r, page, DICT_FLD__SYS_FIELDS__POS, 4),
        col_name=_s(r, page, DICT_FLD__SYS_FIELDS__COL_NAME))


def _old_child(page: bytes, origin: int, compact: bool) -> int:
    """Child page number of a node-pointer record: its last field, 4 bytes."""
    if compact:
        raise rec.RecordError("dictionary node pointer page is not in REDUNDANT format")
    r = rec.read_old_record(page, origin)
    last = r.fields[-1]
    if last.length != 4:
        raise rec.RecordError(f"child page field of {last.length} bytes")
    return int.from_bytes(page[last.start:last.start + 4], "big")


def _walk(space: SpaceFile, root: int, index_id: int, name: str, parse, out: list, d: Dictionary) -> None:
    where = f"{space.display} {name}"
    if root == 0 or root >= space.n_pages:
        d.errors.append(f"{space.display} page {DICT_HDR_PAGE_NO}: {name} root page {root} is outside the file")
        return
    leaves = rec.walk_btree(space.page, root, (FIL_PAGE_INDEX,), index_id, _old_child,
                            max_pages=space.n_pages, errors=d.errors, where=where)
    for leaf in leaves:
        if leaf.header.compact:
            d.errors.append(f"{where} page {leaf.page_no}: dictionary page is not in REDUNDANT format")
            continue
        for o in leaf.origins:
            try:
                hdr = rec.read_old_record_header(leaf.page, o)
                if hdr.deleted:
                    d.deleted_rows += 1
                    continue
                out.append(parse(leaf.page, o))
            except rec.RecordError as e:
                d.errors.append(f"{where} page {leaf.page_no} offset {o}: {e}")


def read_dictionary(space: SpaceFile) -> Dictionary:
    """Read DICT_HDR and the SYS_TABLES / SYS_INDEXES / SYS_COLUMNS / SYS_FIELDS B-trees.

    ``space`` is the system tablespace (ibdata1).  Errors (zeroed or corrupt
    pages, wrong page types, MySQL 8 without SYS_* tables) are collected in
    ``Dictionary.errors`` with file and page; what could be read is returned.
    """
    d = Dictionary()
    try:
        page = space.page(DICT_HDR_PAGE_NO)
    except PageError as e:
        d.errors.append(str(e))
        return d
    fil = read_fil_header(page)
    if not any(page):
        d.errors.append(f"{space.display} page {DICT_HDR_PAGE_NO}: dictionary header page is all zeros")
        return d
    if fil.page_type != FIL_PAGE_TYPE_SYS or fil.page_no != DICT_HDR_PAGE_NO:
        d.errors.append(f"{space.display} page {DICT_HDR_PAGE_NO}: not a dictionary header page "
                        f"(page type {fil.page_type}, page number {fil.page_no})")
        return d
    d.header = hdr = read_dict_header(page)
    if hdr.tables_root == hdr.indexes_root == hdr.columns_root == hdr.fields_root == 0:
        return d                 # MySQL 8.0+: DICT_HDR keeps only the id counters
    d.has_sys_tables = True
    _walk(space, hdr.tables_root, DICT_TABLES_ID, "SYS_TABLES", parse_sys_tables_record, d.tables, d)
    _walk(space, hdr.indexes_root, DICT_INDEXES_ID, "SYS_INDEXES", parse_sys_indexes_record, d.indexes, d)
    _walk(space, hdr.columns_root, DICT_COLUMNS_ID, "SYS_COLUMNS", parse_sys_columns_record, d.columns, d)
    _walk(space, hdr.fields_root, DICT_FIELDS_ID, "SYS_FIELDS", parse_sys_fields_record, d.fields, d)
    return d
