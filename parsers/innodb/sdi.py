"""MySQL 8 Serialized Dictionary Information (SDI) inside a tablespace.

Page 0 holds the SDI version and the SDI root page number right after the
XDES array and the encryption info (fsp0fsp.cc fsp_header_get_sdi_offset).
The SDI index is a COMPACT B-tree of FIL_PAGE_SDI (17853) pages whose leaf
records are (type, id, DB_TRX_ID, DB_ROLL_PTR, uncompressed_len,
compressed_len, data) with data a zlib stream of JSON; long data lives in a
chain of FIL_PAGE_SDI_BLOB pages.  Record offsets are named as in MySQL's
utilities/ibd2sdi.cc; page types as in fil0fil.h.  The JSON is MySQL's
serialized dd::Table / dd::Tablespace (sql/dd/impl/sdi.cc).

ROW_FORMAT=COMPRESSED tablespaces: SDI records are located in the inflated page_zip
stream and its modification log by their layout (see :func:`scan_zip_sdi_records`).
Encrypted SDI pages are reported as errors naming the page, not decrypted.
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field

from ..codecs.general import DecodeError, lz4_block_decompress, zlib_decompress
from . import records as rec
from .fil import (FIL_NULL, FIL_PAGE_ALGORITHM_V1, FIL_PAGE_COMPRESSED, FIL_PAGE_ORIGINAL_TYPE_V1, FIL_PAGE_DATA, FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED, FIL_PAGE_SDI,
                  FIL_PAGE_SDI_BLOB, FIL_PAGE_TYPE, MYSQL_ENCRYPTED_TYPES)
from .sysfile import PageError, SDI_VERSION, SpaceFile, sdi_offset

ENCRYPTED_TYPES = MYSQL_ENCRYPTED_TYPES + (FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED,)

# -- utilities/ibd2sdi.cc: SDI index record layout ----------------------------------
REC_DATA_TYPE_LEN = 4
REC_DATA_ID_LEN = 8
DATA_TRX_ID_LEN = 6          # data0type.h
DATA_ROLL_PTR_LEN = 7        # data0type.h
REC_DATA_UNCOMP_LEN = 4
REC_DATA_COMP_LEN = 4
REC_OFF_DATA_TYPE = 0
REC_OFF_DATA_ID = REC_OFF_DATA_TYPE + REC_DATA_TYPE_LEN                 # 4
REC_OFF_DATA_TRX_ID = REC_OFF_DATA_ID + REC_DATA_ID_LEN                 # 12
REC_OFF_DATA_ROLL_PTR = REC_OFF_DATA_TRX_ID + DATA_TRX_ID_LEN           # 18
REC_OFF_DATA_UNCOMP_LEN = REC_OFF_DATA_ROLL_PTR + DATA_ROLL_PTR_LEN     # 25
REC_OFF_DATA_COMP_LEN = REC_OFF_DATA_UNCOMP_LEN + REC_DATA_UNCOMP_LEN   # 29
REC_OFF_DATA_VARCHAR = REC_OFF_DATA_COMP_LEN + REC_DATA_COMP_LEN        # 33
#: ibd2sdi.cc: SDI BLOB pages never come before page 4
SDI_BLOB_ALLOWED = 4

# -- lob0lob.h: BTR_EXTERN reference and old-style BLOB page header ---------------
BTR_EXTERN_SPACE_ID = 0
BTR_EXTERN_PAGE_NO = 4
BTR_EXTERN_OFFSET = 8
BTR_EXTERN_LEN = 12
BTR_EXTERN_FIELD_REF_SIZE = 20
LOB_HDR_PART_LEN = 0
LOB_HDR_NEXT_PAGE_NO = 4
LOB_HDR_SIZE = 8

# -- fil0types.h: MySQL transparent page compression header (FIL_PAGE_COMPRESSED), fil.py
# os0file.h Compression::Type
COMPRESSION_ZLIB = 1
COMPRESSION_LZ4 = 2

# dd::Sdi_type (sql/dd/sdi_fwd.h / ibd2sdi output "type")
SDI_TYPE_TABLE = 1
SDI_TYPE_TABLESPACE = 2

#: Cap on one SDI JSON document (MySQL's largest, mysql.ibd tables, are < 100 KB).
MAX_SDI_BYTES = 16 * 1024 * 1024

SDI_LEAF_COLUMNS = [
    rec.ColumnSpec("type", REC_DATA_TYPE_LEN),
    rec.ColumnSpec("id", REC_DATA_ID_LEN),
    rec.ColumnSpec("DB_TRX_ID", DATA_TRX_ID_LEN),
    rec.ColumnSpec("DB_ROLL_PTR", DATA_ROLL_PTR_LEN),
    rec.ColumnSpec("uncompressed_len", REC_DATA_UNCOMP_LEN),
    rec.ColumnSpec("compressed_len", REC_DATA_COMP_LEN),
    rec.ColumnSpec("data", 0, big=True),
]


#: dd::Index::enum_index_type (sql/dd/types/index.h): IT_PRIMARY 1, IT_UNIQUE 2, IT_MULTIPLE 3,
#: IT_FULLTEXT 4, IT_SPATIAL 5
DD_INDEX_FULLTEXT = 4


class SdiError(Exception):
    """An SDI record or page could not be decoded; the message names where."""


@dataclass
class SdiRecord:
    """One SDI leaf record and its decoded JSON (None when it could not be decoded)."""

    type: int
    id: int
    uncompressed_len: int
    compressed_len: int
    page_no: int
    offset: int
    external: bool = False
    json: dict | None = None


@dataclass
class SdiColumn:
    """A column of a dd::Table from the SDI."""

    name: str
    ordinal_position: int
    type: int
    column_type_utf8: str
    hidden: int
    is_nullable: bool
    is_virtual: bool = False


@dataclass
class SdiIndex:
    """An index of a dd::Table (or of one partition) with its InnoDB ids."""

    name: str
    id: int | None
    root: int | None
    space_id: int | None
    table_id: int | None
    hidden: bool
    type: int
    partition: str | None = None
    on_virtual_column: bool = False     # functional index / index on a virtual generated column


@dataclass
class SdiTable:
    """A dd::Table from the SDI: names, columns, indexes (and partition indexes)."""

    schema: str
    name: str
    sdi_id: int
    mysqld_version_id: int | None
    engine: str
    row_format: int | None
    columns: list[SdiColumn] = field(default_factory=list)
    indexes: list[SdiIndex] = field(default_factory=list)
    partitions: list[str] = field(default_factory=list)

    @property
    def full_name(self) -> str:
        return f"{self.schema}.{self.name}"


@dataclass
class SdiTablespace:
    """A dd::Tablespace from the SDI."""

    name: str
    space_id: int | None
    flags: int | None
    files: list[str] = field(default_factory=list)
    server_version: int | None = None


@dataclass
class SdiInfo:
    """Everything read from the SDI of one tablespace file."""

    path: str
    space_id: int | None = None
    sdi_version: int | None = None
    root_page: int | None = None
    records: list[SdiRecord] = field(default_factory=list)
    tables: list[SdiTable] = field(default_factory=list)
    tablespaces: list[SdiTablespace] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def parse_se_private_data(text: str) -> dict[str, str]:
    """Split dd se_private_data / options ("k=v;k=v;") into a dict."""
    out: dict[str, str] = {}
    for part in (text or "").split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v
    return out


def _int_or_none(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def read_sdi_root(page0: bytes, logical: int, physical: int, offset: int = 0) -> tuple[int, int]:
    """(SDI version, SDI root page number) stored on page 0 (fsp_header_get_sdi_offset)."""
    off = offset + sdi_offset(logical, physical)
    if len(page0) < off + 8:
        raise SdiError(f"page 0 too short for the SDI root at offset {off}")
    return struct.unpack_from(">II", page0, off)


def uncompress_mysql_page(page: bytes, page_no: int = 0) -> bytes:
    """The original page of a FIL_PAGE_COMPRESSED page (MySQL transparent compression).

    Header at FIL_PAGE_VERSION (fil0types.h *_V1): version, algorithm, original
    type, original size, compressed size; the payload starts at FIL_PAGE_DATA.
    """
    algo = page[FIL_PAGE_ALGORITHM_V1]
    orig_type, orig_size, comp_size = struct.unpack_from(">HHH", page, FIL_PAGE_ORIGINAL_TYPE_V1)
    if FIL_PAGE_DATA + comp_size > len(page) or FIL_PAGE_DATA + orig_size > len(page):
        raise SdiError(f"page {page_no}: compressed page claims {comp_size} -> {orig_size} bytes, "
                       f"more than a {len(page)}-byte page")
    payload = page[FIL_PAGE_DATA:FIL_PAGE_DATA + comp_size]
    try:
        if algo == COMPRESSION_ZLIB:
            body = zlib_decompress(payload, max_output=orig_size)
        elif algo == COMPRESSION_LZ4:
            body = lz4_block_decompress(payload, orig_size, max_output=orig_size)
        else:
            raise SdiError(f"page {page_no}: unknown page compression algorithm {algo}")
    except DecodeError as e:
        raise SdiError(f"page {page_no}: page decompression failed: {e}") from None
    out = bytearray(page[:FIL_PAGE_DATA]) + body
    out[FIL_PAGE_TYPE:FIL_PAGE_TYPE + 2] = struct.pack(">H", orig_type)
    out += bytes(len(page) - len(out))
    return bytes(out[:len(page)])


def decode_sdi_blob(data: bytes, uncompressed_len: int, where: str = "") -> dict:
    """Inflate one SDI data field (zlib) and parse its JSON (dict0sdi-decompress.h)."""
    if uncompressed_len > MAX_SDI_BYTES:
        raise SdiError(f"{where}: SDI claims {uncompressed_len} uncompressed bytes, over the cap")
    try:
        raw = zlib_decompress(bytes(data), max_output=uncompressed_len)
    except DecodeError as e:
        raise SdiError(f"{where}: SDI data does not inflate: {e}") from None
    if len(raw) != uncompressed_len:
        raise SdiError(f"{where}: SDI inflates to {len(raw)} bytes, record says {uncompressed_len}")
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise SdiError(f"{where}: SDI is not JSON: {e}") from None
    if not isinstance(obj, dict):
        raise SdiError(f"{where}: SDI JSON is not an object")
    return obj


def _sdi_child(page: bytes, origin: int, compact: bool) -> int:
    """Child page of an SDI node pointer: 4 bytes after the (type, id) key (ibd2sdi.cc)."""
    o = origin + REC_DATA_TYPE_LEN + REC_DATA_ID_LEN
    if o + 4 > len(page):
        raise rec.RecordError("node pointer runs past the page end")
    return struct.unpack_from(">I", page, o)[0]


class _Pages:
    """Page reader for the SDI walk: transparently uncompresses FIL_PAGE_COMPRESSED pages."""

    def __init__(self, space: SpaceFile):
        self.space = space

    def __call__(self, page_no: int) -> bytes:
        page = self.space.page(page_no)
        ptype = struct.unpack_from(">H", page, FIL_PAGE_TYPE)[0]
        if ptype == FIL_PAGE_COMPRESSED:
            try:
                return uncompress_mysql_page(page, page_no)
            except SdiError as e:
                raise PageError(self.space.display, page_no, str(e).split(": ", 1)[-1]) from None
        if ptype in ENCRYPTED_TYPES:
            raise PageError(self.space.display, page_no, f"page is encrypted (type {ptype}); not decrypted")
        return page


def _read_blob_chain(pages: _Pages, first: int, total: int, where: str) -> bytes:
    """Concatenate an SDI BLOB chain (FIL_PAGE_SDI_BLOB pages, lob0lob.h LOB_HDR_*), bounded."""
    out = bytearray()
    seen: set[int] = set()
    page_no = first
    while page_no != FIL_NULL:
        if page_no < SDI_BLOB_ALLOWED or page_no in seen or len(seen) > pages.space.n_pages:
            raise SdiError(f"{where}: bad or repeated SDI BLOB page {page_no}")
        seen.add(page_no)
        page = pages(page_no)
        ptype = struct.unpack_from(">H", page, FIL_PAGE_TYPE)[0]
        if ptype != FIL_PAGE_SDI_BLOB:
            raise SdiError(f"{where}: page {page_no} has type {ptype}, expected an SDI BLOB page")
        part, nxt = struct.unpack_from(">II", page, FIL_PAGE_DATA + LOB_HDR_PART_LEN)
        start = FIL_PAGE_DATA + LOB_HDR_SIZE
        if part > len(page) - start or len(out) + part > total:
            raise SdiError(f"{where}: SDI BLOB page {page_no} claims {part} bytes")
        out += page[start:start + part]
        page_no = nxt
    if len(out) != total:
        raise SdiError(f"{where}: SDI BLOB chain holds {len(out)} bytes, record says {total}")
    return bytes(out)


def parse_sdi_record(pages: _Pages, page: bytes, page_no: int, origin: int, where: str) -> SdiRecord:
    """Read one SDI leaf record (ibd2sdi.cc REC_OFF_DATA_*) and decode its JSON."""
    r = rec.read_new_record(page, origin, SDI_LEAF_COLUMNS)
    f_data = r.fields[6]
    stype, sid = struct.unpack_from(">IQ", page, origin + REC_OFF_DATA_TYPE)
    uncomp, comp = struct.unpack_from(">II", page, origin + REC_OFF_DATA_UNCOMP_LEN)
    out = SdiRecord(stype, sid, uncomp, comp, page_no, origin, external=f_data.extern)
    here = f"{where} page {page_no} offset {origin} (SDI type {stype} id {sid})"
    if f_data.extern:
        if f_data.length < BTR_EXTERN_FIELD_REF_SIZE:
            raise SdiError(f"{here}: external field of {f_data.length} bytes is shorter than its reference")
        ref = f_data.start + f_data.length - BTR_EXTERN_FIELD_REF_SIZE
        ext_page = struct.unpack_from(">I", page, ref + BTR_EXTERN_PAGE_NO)[0]
        ext_len = struct.unpack_from(">Q", page, ref + BTR_EXTERN_LEN)[0] & 0xFFFFFFFF
        local = bytes(page[f_data.start:ref])
        if len(local) + ext_len != comp:
            raise SdiError(f"{here}: data length {len(local)} + {ext_len} differs from compressed_len {comp}")
        data = local + _read_blob_chain(pages, ext_page, ext_len, here)
    else:
        if f_data.length != comp:
            raise SdiError(f"{here}: data field of {f_data.length} bytes, compressed_len says {comp}")
        data = page[f_data.start:f_data.start + f_data.length]
    out.json = decode_sdi_blob(data, uncomp, here)
    return out


def table_from_sdi(obj: dict, sdi_id: int = 0) -> SdiTable:
    """Names, columns and indexes of a serialized dd::Table."""
    dd = obj.get("dd_object") or {}
    t = SdiTable(schema=str(dd.get("schema_ref", "")), name=str(dd.get("name", "")), sdi_id=sdi_id,
                 mysqld_version_id=obj.get("mysqld_version_id"), engine=str(dd.get("engine", "")),
                 row_format=dd.get("row_format"))
    for c in dd.get("columns") or []:
        t.columns.append(SdiColumn(str(c.get("name", "")), int(c.get("ordinal_position", 0) or 0),
                                   int(c.get("type", 0) or 0), str(c.get("column_type_utf8", "")),
                                   int(c.get("hidden", 0) or 0), bool(c.get("is_nullable", False)),
                                   bool(c.get("is_virtual", False))))
    table_indexes = dd.get("indexes") or []

    def on_virtual(i: dict) -> bool:
        for e in i.get("elements") or []:
            opx = e.get("column_opx")
            if not e.get("hidden") and isinstance(opx, int) and 0 <= opx < len(t.columns):
                if t.columns[opx].is_virtual:
                    return True
        return False

    def idx(i: dict, name: str, partition: str | None, virtual: bool) -> SdiIndex:
        se = parse_se_private_data(i.get("se_private_data", ""))
        return SdiIndex(name=name, id=_int_or_none(se.get("id")), root=_int_or_none(se.get("root")),
                        space_id=_int_or_none(se.get("space_id")), table_id=_int_or_none(se.get("table_id")),
                        hidden=bool(i.get("hidden", False)), type=int(i.get("type", 0) or 0),
                        partition=partition, on_virtual_column=virtual)

    for i in table_indexes:
        t.indexes.append(idx(i, str(i.get("name", "")), None, on_virtual(i)))

    def walk_parts(parts: list, prefix: str, depth: int) -> None:
        for p in parts or []:
            pname = prefix + str(p.get("name", ""))
            subs = p.get("subpartitions") or []
            if subs and depth == 0:
                walk_parts(subs, pname + "#SP#", depth + 1)
                continue
            t.partitions.append(pname)
            for pi in p.get("indexes") or []:
                opx = pi.get("index_opx")
                name, virtual = "", False
                if isinstance(opx, int) and 0 <= opx < len(table_indexes):
                    name = str(table_indexes[opx].get("name", ""))
                    virtual = on_virtual(table_indexes[opx])
                t.indexes.append(idx(pi, name, pname, virtual))

    walk_parts(dd.get("partitions") or [], "", 0)
    return t


def tablespace_from_sdi(obj: dict) -> SdiTablespace:
    """Name, space id and files of a serialized dd::Tablespace."""
    dd = obj.get("dd_object") or {}
    se = parse_se_private_data(dd.get("se_private_data", ""))
    return SdiTablespace(name=str(dd.get("name", "")), space_id=_int_or_none(se.get("id")),
                         flags=_int_or_none(se.get("flags")),
                         files=[str(f.get("filename", "")) for f in dd.get("files") or []],
                         server_version=_int_or_none(se.get("server_version")))


def scan_zip_sdi_records(data: bytes, where: str, page_no: int, base: int = 0) -> list[SdiRecord]:
    """SDI records inside the inflated stream or the modification log of a page_zip page.

    In ROW_FORMAT=COMPRESSED pages (page0zip.cc) a clustered leaf record is stored without its
    DB_TRX_ID / DB_ROLL_PTR (kept apart in the page trailer), so an SDI record reads
    type(4) id(8) uncompressed_len(4) compressed_len(4) data.  Records are located by that
    layout: a zlib header whose preceding lengths match a stream that inflates to exactly
    ``uncompressed_len`` bytes of JSON.  Heap order and delete marks are not rebuilt.
    """
    out: list[SdiRecord] = []
    i = 20
    n = len(data)
    while i < n - 2:
        j = data.find(b"\x78", i)
        if j < 0 or j >= n - 2:
            break
        i = j + 1
        if ((data[j] << 8) | data[j + 1]) % 31 or j < 20:
            continue
        uncomp, comp = struct.unpack_from(">II", data, j - 8)
        if comp == 0 or j + comp > n or uncomp == 0 or uncomp > MAX_SDI_BYTES:
            continue
        try:
            obj = decode_sdi_blob(data[j:j + comp], uncomp, where)
        except SdiError:
            continue
        stype, sid = struct.unpack_from(">IQ", data, j - 20)
        out.append(SdiRecord(stype, sid, uncomp, comp, page_no, base + j - 20, json=obj))
        i = j + comp
    return out


def _read_sdi_page_zip(space: SpaceFile, info: SdiInfo) -> None:
    """SDI of a ROW_FORMAT=COMPRESSED tablespace: every FIL_PAGE_SDI leaf page, page_zip layout.

    The page header (up to PAGE_DATA) is stored uncompressed; the records follow as one
    zlib stream, then the modification log holds records written since (uncompressed).
    """
    import numpy as np
    from zlib import decompressobj, error as zerror

    where = space.display
    types = space.page_types()
    found: dict[tuple[int, int], SdiRecord] = {}
    for p in np.nonzero(types == FIL_PAGE_SDI)[0].tolist()[:space.n_pages]:
        try:
            page = space.page(int(p))
            hdr = rec.read_index_page_header(page)
        except (PageError, rec.RecordError) as e:
            info.errors.append(str(e) if isinstance(e, PageError) else f"{where} page {p}: {e}")
            continue
        if hdr.level != 0:
            continue
        d = decompressobj()
        try:
            stream = d.decompress(page[rec.PAGE_DATA:], space.logical)
        except zerror as e:
            info.errors.append(f"{where} page {p}: compressed page stream does not inflate: {e}")
            continue
        mlog = d.unused_data if d.eof else b""
        recs = scan_zip_sdi_records(stream, where, int(p)) + scan_zip_sdi_records(
            mlog, where, int(p), base=len(page) - len(mlog))
        for r in recs:                      # a later copy (modification log) replaces an earlier one
            found[(r.type, r.id)] = r
    for r in found.values():
        info.records.append(r)
        try:
            if r.type == SDI_TYPE_TABLE:
                info.tables.append(table_from_sdi(r.json, r.id))
            elif r.type == SDI_TYPE_TABLESPACE:
                info.tablespaces.append(tablespace_from_sdi(r.json))
        except (TypeError, ValueError, AttributeError) as e:
            info.errors.append(f"{where} page {r.page_no}: unexpected SDI JSON shape: {e}")
    if not found:
        info.errors.append(f"{where} page {info.root_page}: no SDI record found in the compressed "
                           f"(page_zip {space.physical}-byte) SDI pages")


def read_sdi(space: SpaceFile) -> SdiInfo:
    """Read every SDI record of one tablespace: root from page 0, B-tree walk, JSON decode.

    Returns partial results; problems (no SDI, zeroed or encrypted pages,
    corrupt records, bad zlib or JSON) are in ``errors`` naming file and page.
    """
    info = SdiInfo(path=space.display, space_id=space.space_id)
    where = space.display
    flags = space.flags
    if flags is not None and flags.full_crc32:
        info.errors.append(f"{where} page 0: MariaDB tablespace (full_crc32 flags), no SDI")
        return info
    try:
        page0 = space.page(0)
        info.sdi_version, info.root_page = read_sdi_root(page0, space.logical, space.physical)
    except (PageError, SdiError) as e:
        info.errors.append(str(e) if isinstance(e, PageError) else f"{where} page 0: {e}")
        return info
    if info.sdi_version != SDI_VERSION or info.root_page == 0:
        info.errors.append(f"{where} page 0: no SDI (version {info.sdi_version}, root page {info.root_page})")
        info.root_page = None
        return info
    if info.root_page >= space.n_pages:
        info.errors.append(f"{where} page 0: SDI root page {info.root_page} is past the end of the file "
                           f"({space.n_pages} pages; truncated?)")
        return info
    if space.physical != space.logical:
        _read_sdi_page_zip(space, info)
        return info
    pages = _Pages(space)
    leaves = rec.walk_btree(pages, info.root_page, (FIL_PAGE_SDI,), None, _sdi_child,
                            max_pages=space.n_pages, errors=info.errors, where=f"{where} SDI")
    for leaf in leaves:
        for o in leaf.origins:
            try:
                hdr = rec.read_new_record_header(leaf.page, o)
                if hdr.deleted:
                    continue
                r = parse_sdi_record(pages, leaf.page, leaf.page_no, o, where)
            except (rec.RecordError, PageError) as e:
                info.errors.append(f"{where} page {leaf.page_no} offset {o}: {e}")
                continue
            except SdiError as e:
                info.errors.append(str(e))
                continue
            info.records.append(r)
            try:
                if r.type == SDI_TYPE_TABLE:
                    info.tables.append(table_from_sdi(r.json, r.id))
                elif r.type == SDI_TYPE_TABLESPACE:
                    info.tablespaces.append(tablespace_from_sdi(r.json))
            except (TypeError, ValueError, AttributeError) as e:
                info.errors.append(f"{where} page {leaf.page_no} offset {o}: unexpected SDI JSON shape: {e}")
    return info
