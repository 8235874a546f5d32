"""The MySQL 8 data dictionary tables inside mysql.ibd: names for space ids and index ids
without the tablespaces' own SDI (encrypted files, partitions whose table SDI is in another
file, files copied without their SDI).

mysql.ibd's own SDI describes the dictionary tables themselves (``mysql.tables``,
``mysql.indexes``, ...): their columns (dd::Column type, byte length, nullability) and the
root page of their clustered index.  From that the records of those B-trees are read
(COMPACT/DYNAMIC layout, :func:`records.read_new_record`), and joined:

* ``mysql.tablespaces``: DD id -> name, InnoDB space id and flags (``se_private_data``),
* ``mysql.schemata``: DD id -> schema name,
* ``mysql.tables`` -> schema and name of each table,
* ``mysql.indexes`` / ``mysql.index_partitions``: InnoDB index id, root page and space id
  (``se_private_data`` ``id=..;root=..;space_id=..``) per index (and partition),
* ``mysql.table_partitions``: partition names (sub-partitions as ``p#sp#sp0``).

Column types are dd::enum_column_types (sql/dd/types/column.h); a type whose stored length
cannot be told from the SDI alone stops the read of that table with an error naming it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import records as rec
from .sdi import DD_INDEX_FULLTEXT, SdiInfo, parse_se_private_data
from .fil import FIL_PAGE_INDEX
from .fsp import FSP_FLAGS_POS_SHARED
from .sysfile import PageError, SpaceFile

# sql/dd/types/column.h enum_column_types
TYPE_DECIMAL, TYPE_TINY, TYPE_SHORT, TYPE_LONG, TYPE_FLOAT, TYPE_DOUBLE = 1, 2, 3, 4, 5, 6
TYPE_TIMESTAMP, TYPE_LONGLONG, TYPE_INT24, TYPE_DATE, TYPE_TIME = 8, 9, 10, 11, 12
TYPE_DATETIME, TYPE_YEAR, TYPE_NEWDATE, TYPE_VARCHAR, TYPE_BIT = 13, 14, 15, 16, 17
TYPE_TIMESTAMP2, TYPE_DATETIME2, TYPE_TIME2, TYPE_NEWDECIMAL = 18, 19, 20, 21
TYPE_ENUM, TYPE_SET, TYPE_TINY_BLOB, TYPE_MEDIUM_BLOB, TYPE_LONG_BLOB, TYPE_BLOB = 22, 23, 24, 25, 26, 27
TYPE_VAR_STRING, TYPE_STRING, TYPE_GEOMETRY, TYPE_JSON = 28, 29, 30, 31

#: fixed storage bytes of the integer / date types (InnoDB stores them big-endian, sign bit flipped)
FIXED_TYPE_LEN = {TYPE_TINY: 1, TYPE_SHORT: 2, TYPE_INT24: 3, TYPE_LONG: 4, TYPE_LONGLONG: 8,
                  TYPE_FLOAT: 4, TYPE_DOUBLE: 8, TYPE_YEAR: 1, TYPE_DATE: 3, TYPE_NEWDATE: 3}
#: my_time.h: TIMESTAMP2 4 bytes, DATETIME2 5, TIME2 3, plus (fsp + 1) / 2 for fractional seconds
TEMPORAL2_BASE = {TYPE_TIMESTAMP2: 4, TYPE_DATETIME2: 5, TYPE_TIME2: 3}
VARIABLE_TYPES = (TYPE_VARCHAR, TYPE_VAR_STRING, TYPE_TINY_BLOB, TYPE_MEDIUM_BLOB, TYPE_LONG_BLOB,
                  TYPE_BLOB, TYPE_GEOMETRY, TYPE_JSON)
BLOB_TYPES = (TYPE_TINY_BLOB, TYPE_MEDIUM_BLOB, TYPE_LONG_BLOB, TYPE_BLOB, TYPE_GEOMETRY, TYPE_JSON)
#: data0type.h DATA_BIG_COL: a column longer than 255 bytes may use 2-byte lengths
DATA_BIG_LEN = 255
#: dict0dd.h dict_sys_t::s_dd_space_id (mysql.ibd)
DD_SPACE_ID = 0xFFFFFFFE
DD_TABLES = ("tablespaces", "schemata", "tables", "indexes", "table_partitions", "index_partitions")


#: stands for a column value stored off-page (not read)
EXTERNAL = object()


class DdError(Exception):
    """A dictionary table cannot be read; the message names it."""


@dataclass
class DdColumn:
    """One column of a dictionary table, as its SDI describes it."""

    name: str
    type: int
    length: int            # bytes (SDI char_length)
    nullable: bool
    unsigned: bool
    n_elements: int = 0    # ENUM / SET members
    precision: int = 0     # fractional seconds of TIMESTAMP2 / DATETIME2 / TIME2


@dataclass
class DdTableDef:
    """How the clustered index records of one dictionary table are laid out."""

    name: str
    root: int
    index_id: int
    columns: list[DdColumn]       # in clustered index field order (key, DB_TRX_ID, DB_ROLL_PTR, rest)
    n_key: int


@dataclass
class DdSpace:
    """What mysql.ibd's dictionary says about one InnoDB tablespace."""

    space_id: int
    name: str                                          # dd::Tablespace name ("ts1", "db1/i1")
    shared: bool
    tables: list[str] = field(default_factory=list)   # "db.table" (partitions "db.table#P#p0")
    indexes: dict[int, tuple[str, str]] = field(default_factory=dict)   # index id -> (table, index)


@dataclass
class DdNames:
    """The dictionary of one mysql.ibd: per InnoDB space id, names of its tables and indexes."""

    path: str
    spaces: dict[int, DdSpace] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)      # dictionary table -> live rows read
    errors: list[str] = field(default_factory=list)
    #: InnoDB ids from the indexes' se_private_data (``id=..;table_id=..``): FULLTEXT aux tables
    #: name their owner by them
    table_ids: dict[int, str] = field(default_factory=dict)
    index_ids: dict[int, tuple[str, str]] = field(default_factory=dict)
    fulltext: dict[int, tuple[int, str, str]] = field(default_factory=dict)   # index id -> (table id, table, index)


def column_spec(c: DdColumn) -> rec.ColumnSpec:
    """The record field layout of one column (COMPACT / DYNAMIC)."""
    if c.name in ("DB_TRX_ID", "DB_ROLL_PTR"):     # hidden system columns: their SDI length is the size
        if not c.length:
            raise DdError(f"column {c.name!r} without a length")
        return rec.ColumnSpec(c.name, c.length, False)
    if c.type in FIXED_TYPE_LEN:
        return rec.ColumnSpec(c.name, FIXED_TYPE_LEN[c.type], c.nullable)
    if c.type in TEMPORAL2_BASE:
        return rec.ColumnSpec(c.name, TEMPORAL2_BASE[c.type] + (c.precision + 1) // 2, c.nullable)
    if c.type == TYPE_ENUM:
        return rec.ColumnSpec(c.name, 1 if c.n_elements < 256 else 2, c.nullable)
    if c.type in VARIABLE_TYPES:
        return rec.ColumnSpec(c.name, 0, c.nullable, big=c.type in BLOB_TYPES or c.length > DATA_BIG_LEN)
    raise DdError(f"column {c.name!r}: dictionary column type {c.type} is not decoded")


def table_def_from_sdi(obj: dict) -> DdTableDef:
    """Record layout of a dictionary table from its serialized dd::Table (mysql.ibd SDI)."""
    dd = obj.get("dd_object") or {}
    name = str(dd.get("name", ""))
    cols = dd.get("columns") or []
    idxs = dd.get("indexes") or []
    if not idxs:
        raise DdError(f"mysql.{name}: no index in its SDI")
    pk = idxs[0]
    se = parse_se_private_data(pk.get("se_private_data", ""))
    try:
        root, index_id = int(se["root"]), int(se["id"])
    except (KeyError, ValueError):
        raise DdError(f"mysql.{name}: PRIMARY has no root / id in its se_private_data") from None
    out: list[DdColumn] = []
    n_key = None
    for e in pk.get("elements") or []:
        opx = e.get("column_opx")
        if not isinstance(opx, int) or not 0 <= opx < len(cols):
            raise DdError(f"mysql.{name}: index element names column {opx!r}")
        c = cols[opx]
        if c.get("name") == "DB_TRX_ID" and n_key is None:
            n_key = len(out)
        out.append(DdColumn(str(c.get("name", "")), int(c.get("type", 0) or 0), int(c.get("char_length", 0) or 0),
                            bool(c.get("is_nullable", False)), bool(c.get("is_unsigned", False)),
                            len(c.get("elements") or []), int(c.get("datetime_precision", 0) or 0)))
    if n_key is None:
        raise DdError(f"mysql.{name}: no DB_TRX_ID in the clustered index")
    return DdTableDef(name, root, index_id, out, n_key)


def _value(page: bytes, r: rec.Record, i: int, c: DdColumn):
    v = r.value(page, i)
    if v is None:
        return None
    if r.fields[i].extern:
        return EXTERNAL          # a long value (a view definition) in a LOB: not needed for names
    if c.type in FIXED_TYPE_LEN and c.type not in (TYPE_FLOAT, TYPE_DOUBLE):
        n = int.from_bytes(v, "big")
        if not c.unsigned:                                 # sign bit stored flipped
            n ^= 1 << (8 * len(v) - 1)
            if n >= 1 << (8 * len(v) - 1):
                n -= 1 << (8 * len(v))
        return n
    if c.type in VARIABLE_TYPES:
        return bytes(v).decode("utf-8", "replace")
    return bytes(v)


def read_dd_table(space: SpaceFile, t: DdTableDef, errors: list[str]) -> list[dict]:
    """Every live row of one dictionary table (delete-marked rows skipped)."""
    specs = [column_spec(c) for c in t.columns]
    key = specs[:t.n_key] + [rec.ColumnSpec("child", 4)]
    where = f"{space.display} mysql.{t.name}"

    def child(page: bytes, origin: int, compact: bool) -> int:
        r = rec.read_new_record(page, origin, key)
        return int.from_bytes(r.value(page, len(key) - 1), "big")

    leaves = rec.walk_btree(space.page, t.root, (FIL_PAGE_INDEX,), t.index_id, child,
                            max_pages=space.n_pages, errors=errors, where=where)
    rows = []
    for leaf in leaves:
        for o in leaf.origins:
            try:
                r = rec.read_new_record(leaf.page, o, specs)
                if r.header.deleted:
                    continue
                rows.append({c.name: _value(leaf.page, r, i, c) for i, c in enumerate(t.columns)
                             if c.name not in ("DB_TRX_ID", "DB_ROLL_PTR")})
            except (rec.RecordError, DdError) as e:
                errors.append(f"{where} page {leaf.page_no} offset {o}: {e}")
    return rows


def _enum(v) -> int | None:
    """An ENUM column's value as read (its 1-based index, stored big-endian)."""
    if isinstance(v, (bytes, bytearray)):
        return int.from_bytes(v, "big") if v else None
    return _int(v)


def _int(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def read_dd_names(space: SpaceFile, info: SdiInfo) -> DdNames:
    """Names per InnoDB space id from the dictionary tables of mysql.ibd (``info``: its SDI)."""
    out = DdNames(space.display)
    defs: dict[str, DdTableDef] = {}
    for r in info.records:
        dd = (r.json or {}).get("dd_object") or {}
        if dd.get("schema_ref") == "mysql" and dd.get("name") in DD_TABLES:
            try:
                defs[dd["name"]] = table_def_from_sdi(r.json)
            except DdError as e:
                out.errors.append(f"{space.display}: {e}")
    missing = [n for n in DD_TABLES if n not in defs]
    if missing:
        out.errors.append(f"{space.display}: no SDI for mysql.{', mysql.'.join(missing)}: dictionary not read")
        return out
    rows: dict[str, list[dict]] = {}
    for name, t in defs.items():
        try:
            rows[name] = read_dd_table(space, t, out.errors)
        except (DdError, PageError) as e:
            out.errors.append(f"{space.display} mysql.{name}: {e}")
            rows[name] = []
        out.rows[name] = len(rows[name])

    ts_by_dd: dict[int, DdSpace] = {}
    for row in rows["tablespaces"]:
        se_text = row.get("se_private_data")
        se = parse_se_private_data(se_text if isinstance(se_text, str) else "")
        sid = _int(se.get("id"))
        if sid is None:
            continue
        flags = _int(se.get("flags")) or 0
        ds = DdSpace(sid, str(row.get("name") or ""), bool(flags >> FSP_FLAGS_POS_SHARED & 1))
        ts_by_dd[row.get("id")] = ds
        out.spaces[sid] = ds
    schemata = {row.get("id"): row.get("name") for row in rows["schemata"]}
    tables = {row.get("id"): row for row in rows["tables"]}
    parts = {row.get("id"): row for row in rows["table_partitions"]}

    def full_name(table_id: int) -> str | None:
        t = tables.get(table_id)
        if t is None or not isinstance(schemata.get(t.get("schema_id")), str):
            return None
        return f"{schemata[t['schema_id']]}.{t.get('name')}"

    def put(se_text, tname: str, iname: str) -> None:
        se = parse_se_private_data(se_text if isinstance(se_text, str) else "")
        sid, iid = _int(se.get("space_id")), _int(se.get("id"))
        if sid is None or iid is None:
            return
        ds = out.spaces.get(sid)
        if ds is None:
            ds = out.spaces[sid] = DdSpace(sid, f"space {sid}", False)
        ds.indexes[iid] = (tname, iname)
        if tname not in ds.tables:
            ds.tables.append(tname)

    index_rows = {row.get("id"): row for row in rows["indexes"]}
    for row in rows["indexes"]:
        if not isinstance(row.get("engine"), str) or row["engine"].lower() != "innodb":
            continue
        tname = full_name(row.get("table_id"))
        if tname is not None:
            put(row.get("se_private_data"), tname, str(row.get("name")))
            se_text = row.get("se_private_data")
            se = parse_se_private_data(se_text if isinstance(se_text, str) else "")
            tid, iid = _int(se.get("table_id")), _int(se.get("id"))
            if tid is not None and iid is not None:
                out.table_ids[tid] = tname
                out.index_ids[iid] = (tname, str(row.get("name")))
                if _enum(row.get("type")) == DD_INDEX_FULLTEXT:
                    out.fulltext[iid] = (tid, tname, str(row.get("name")))
    for row in rows["index_partitions"]:
        p = parts.get(row.get("partition_id"))
        ix = index_rows.get(row.get("index_id"))
        if p is None or ix is None:
            continue
        tname = full_name(p.get("table_id"))
        if tname is None:
            continue
        pname = str(p.get("name"))
        parent = parts.get(p.get("parent_partition_id")) if p.get("parent_partition_id") is not None else None
        if parent is not None:
            pname = f"{parent.get('name')}#SP#{pname}"
        put(row.get("se_private_data"), f"{tname}#P#{pname}", str(ix.get("name")))
    for ds in out.spaces.values():
        ds.tables.sort()
    return out
