"""Engine comparison: the same table (same name, or the same columns) held in several
schemas or engines of one data dir, side by side: rows, the bytes really on disk,
allocated bytes, what information_schema would report (computed the way each engine
computes it), bytes per row and the ratio to the raw row size.

Groups: tables that share a name across schemas or engines (:func:`twins`), then tables
whose ``.frm`` define the same columns (:func:`column_twins`: the same names, types,
lengths, nullability and collations in the same order, read by parsers/server/frmfields.py)
in several schemas or engines (each group's tables the smallest footprint per row first), as the field note's ``insert_test`` / ``insert_test_8k`` /
``sortbuild_test`` are: a columns group that only repeats a name group is left out.

Figures come from what each engine's parser put in the dataset (``TableEntry.info``,
the files' sections); where an engine's parser does not give a figure it is None,
never guessed:

* ARCHIVE (ha_archive.cc ``info``): TABLE_ROWS = the header's rows, DATA_LENGTH = the
  file's st_size; the raw row = the inflated row stream (each packed row with its
  4-byte length) per row.
* InnoDB (ha_innobase::info, dict0stats.cc): DATA_LENGTH = the clustered index's pages x
  the physical page size (KEY_BLOCK_SIZE for ROW_FORMAT=COMPRESSED), INDEX_LENGTH = the
  other indexes' pages x the physical page size, leaving out SPATIAL and FULLTEXT indexes
  as dict_stats_update_persistent does (``DICT_FTS | DICT_SPATIAL``: their keys from the
  ``.frm``), summed over a partitioned table's partitions (ha_partition::info); TABLE_ROWS
  is a sampled estimate in the server, here the clustered index's leaf records (exact).
  The server counts the pages its segments reserve, which equals the pages used until a
  segment holds a free page or a whole extent.
* MyISAM / Aria (ha_myisam::info, ha_maria::info): the index file's state (records,
  data_file_length, key_file_length), as the parsers give them.
* MyRocks (ha_rocksdb::info): the saved index statistics (parsers/rocksdb); the bytes on
  disk are the table's share of its SSTs (an SST can hold several tables' indexes: each
  SST's bytes split by its indexes' DATA_SIZE).
* TokuDB: the header estimates (parsers/tokudb/tables.py).
* CSV (ha_tina.cc ``info``): TABLE_ROWS 2 (the server says 2 until it has read the whole
  table since it started: "a lie, but you don't want the optimizer to see zero or 1"),
  DATA_LENGTH and INDEX_LENGTH 0 (never set); the rows beside it are the lines of the data
  file.

A table's files are its engine's files plus its ``.frm`` / ``.par`` (the server's); an InnoDB
table in the system tablespace counts its indexes' pages there, not the whole ``ibdata1``.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from .fileio import FileReadError, ReadOnlyFile
from .model import Dataset, TableEntry
from .server.frm import FrmError
from .server.frmfields import FrmColumns, read_frm_columns
from .server.frmkeys import read_frm_keys

#: index names of InnoDB's clustered index
CLUSTERED = ("PRIMARY", "GEN_CLUST_INDEX")
#: include/my_base.h: key flags of indexes InnoDB's statistics leave out (DICT_FTS, DICT_SPATIAL)
HA_FULLTEXT = 128
HA_SPATIAL = 1024
#: sql/sql_partition.h: the separator of a partition's name in its file name (and the InnoDB table name)
PART_SEPARATORS = ("#P#", "#p#")
#: ha_tina.cc ha_tina::info: the row count the server gives a CSV table it has not read through
CSV_UNKNOWN_ROWS = 2
#: a .frm larger than this is not one (the what-if's reader has the same bound)
MAX_FRM = 1 << 20


@dataclass
class TwinRow:
    """One table of a comparison group."""

    table: str                 # db.name
    engine: str
    files: list[str]
    rows: int | None
    disk_bytes: int            # apparent bytes of its files (st_size)
    allocated_bytes: int       # st_blocks x 512
    is_table_rows: int | None  # information_schema, computed as the engine computes it
    is_data_length: int | None
    is_index_length: int | None
    raw_row_bytes: float | None = None     # raw bytes per row (its own, or from the twin that knows it)
    raw_source: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def bytes_per_row(self) -> float | None:
        return self.allocated_bytes / self.rows if self.rows else None

    @property
    def ratio_to_raw(self) -> float | None:
        bpr = self.bytes_per_row
        return bpr / self.raw_row_bytes if bpr is not None and self.raw_row_bytes else None

    @property
    def name(self) -> str:
        return self.table.split(".", 1)[1]

    def to_json(self) -> dict:
        return {"table": self.table, "engine": self.engine, "files": list(self.files), "rows": self.rows,
                "disk_bytes": self.disk_bytes, "allocated_bytes": self.allocated_bytes,
                "information_schema": {"table_rows": self.is_table_rows, "data_length": self.is_data_length,
                                       "index_length": self.is_index_length},
                "bytes_per_row": None if self.bytes_per_row is None else round(self.bytes_per_row, 2),
                "raw_row_bytes": None if self.raw_row_bytes is None else round(self.raw_row_bytes, 2),
                "raw_source": self.raw_source,
                "ratio_to_raw": None if self.ratio_to_raw is None else round(self.ratio_to_raw, 4),
                "notes": list(self.notes)}


@dataclass
class TwinGroup:
    """Tables side by side: ``by`` "name" (one name in several places) or "columns" (the
    same columns under several names)."""

    name: str
    by: str
    rows: list[TwinRow]
    columns: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        out = {"name": self.name, "by": self.by, "tables": [r.to_json() for r in self.rows]}
        if self.by == "columns":
            out["columns"] = list(self.columns)
        return out


def _frm_bytes(ds: Dataset, paths: list[str]) -> bytes | None:
    """The table's ``.frm`` as the server wrote it, or None (no file, unreadable, a view)."""
    for p in paths:
        if not p.endswith(".frm"):
            continue
        e = ds.file(p)
        if e is None:
            continue
        try:
            with ReadOnlyFile(e.abspath) as f:
                if f.size > MAX_FRM:
                    return None
                return f.pread(0, f.size)
        except (FileReadError, OSError):
            return None
    return None


def _skipped_index_names(frm: bytes | None) -> set[str]:
    """SPATIAL and FULLTEXT keys: InnoDB's statistics do not count their pages."""
    if not frm:
        return set()
    try:
        return {k.name for k in read_frm_keys(frm) if k.flags & (HA_SPATIAL | HA_FULLTEXT)}
    except (FrmError, ValueError, IndexError):
        return set()


def _of_table(index_table: str | None, key: str) -> bool:
    """An index entry's table is this table, or one of its partitions (``db.t#P#p0``)."""
    if index_table is None or index_table == key:
        return True
    return any(index_table.startswith(key + sep) for sep in PART_SEPARATORS)


def _innodb(ds: Dataset, t: TableEntry, row: TwinRow, frm: bytes | None) -> None:
    clustered = others = None
    skipped = _skipped_index_names(frm)
    key = t.key
    data = index = 0
    rows_unknown = False
    for path in t.files:
        e = ds.file(path)
        sec = (e.sections.get("innodb") if e is not None else None) or {}
        page = int(sec.get("physical_page_size") or sec.get("page_size") or 0)
        shared = e is not None and e.role == "system_tablespace"
        idx = [i for i in (sec.get("indexes") or [])
               if (i.get("table") == key if shared else _of_table(i.get("table"), key))]
        if not idx or not page:
            continue
        # one tablespace (or partition) may hold several: take each table's clustered index
        by_table: dict[str | None, list[dict]] = {}
        for i in idx:
            by_table.setdefault(i.get("table"), []).append(i)
        for part in by_table.values():
            first = next((i for i in part if i.get("name") in CLUSTERED), None) or min(part, key=lambda i: i["index_id"])
            pages = int(first.get("pages") or 0)
            other = sum(int(i.get("pages") or 0) for i in part if i is not first and i.get("name") not in skipped)
            clustered = (clustered or 0) + pages
            others = (others or 0) + other
            data += pages * page
            index += other * page
            if first.get("records") is None and first.get("undecoded_pages"):
                rows_unknown = True         # a light scan (saved by `dbxray scan`) left its pages undecoded
            else:
                row.rows = (row.rows or 0) + int(first.get("records") or 0)
            if shared:
                # the file is everyone's: the table's bytes are its indexes' pages
                own = sum(int(i.get("pages") or 0) for i in part) * page
                row.disk_bytes += own - int(e.apparent_bytes)
                row.allocated_bytes += own - int(e.allocated_bytes)
                row.notes.append(f"InnoDB: in the system tablespace {path}: its bytes are its indexes' pages "
                                 "(the segments' reserved extents not counted)")
    if rows_unknown:
        row.rows = None
        row.notes.append("InnoDB: rows not known: the scan did not decode the page-compressed leaf pages "
                         "(a saved `dbxray scan`; `dbxray scan --full` decodes them)")
    if clustered is not None:
        row.is_data_length = data
        row.is_index_length = index
        row.is_table_rows = row.rows
        row.notes.append("InnoDB: TABLE_ROWS is the leaf records counted (the server shows a sampled estimate)")
    if skipped and clustered is not None:
        row.notes.append(f"InnoDB: INDEX_LENGTH leaves out {', '.join(sorted(skipped))} (SPATIAL/FULLTEXT: "
                         "the server's statistics skip them)")


def _rocksdb_share(ds: Dataset, t: TableEntry, row: TwinRow, entries) -> None:
    """An SST can hold several tables' indexes: this table's share of each of its SSTs is the
    file's bytes (apparent and allocated) times its indexes' part of the file's DATA_SIZE
    (the ``__indexstats__`` of the SST, as the fixture's manifest splits them)."""
    mine = {int(i["index_number"]) for i in (t.info or {}).get("indexes") or [] if i.get("index_number") is not None}
    shared = False
    for e in entries:
        if e.engine != "rocksdb":
            continue
        stats = getattr(e.sections.get("rocksdb"), "index_stats", None) or []
        total = sum(int(st.data_size) for st in stats)
        own = sum(int(st.data_size) for st in stats if int(st.index_number) in mine)
        if not total or own == total:
            continue
        shared = True
        row.disk_bytes -= int(e.apparent_bytes) - round(int(e.apparent_bytes) * own / total)
        row.allocated_bytes -= int(e.allocated_bytes) - round(int(e.allocated_bytes) * own / total)
    if shared:
        row.notes.append("MyRocks: SSTs that hold other tables too are counted by this table's part of "
                         "their DATA_SIZE")


def _figures(ds: Dataset, t: TableEntry, definitions: dict[tuple[str, str], list[str]],
             frm: bytes | None = None) -> TwinRow:
    files = list(t.files) + definitions.get((t.database, t.name), [])
    entries = [e for e in (ds.file(p) for p in files) if e is not None]
    info = t.info or {}
    row = TwinRow(table=t.key, engine=t.engine, files=files, rows=info.get("rows"),
                  disk_bytes=sum(int(e.apparent_bytes) for e in entries),
                  allocated_bytes=sum(int(e.allocated_bytes) for e in entries),
                  is_table_rows=None, is_data_length=None, is_index_length=None)
    if t.engine == "rocksdb":
        _rocksdb_share(ds, t, row, entries)
    reported = info.get("information_schema") or info.get("engine_reported")
    if reported:
        row.is_table_rows = reported.get("table_rows")
        row.is_data_length = reported.get("data_length")
        row.is_index_length = reported.get("index_length")
    if t.engine in ("myisam", "aria") and "table_rows" in info:
        # ha_myisam::info / ha_maria::info: the index file's state
        row.is_table_rows = info.get("table_rows")
        row.is_data_length = info.get("data_length")
        row.is_index_length = info.get("index_length")
    if t.engine == "csv":
        row.is_table_rows, row.is_data_length, row.is_index_length = CSV_UNKNOWN_ROWS, 0, 0
        row.notes.append(f"CSV: information_schema says TABLE_ROWS {CSV_UNKNOWN_ROWS} until the server has read "
                         "the whole table since it started, and DATA_LENGTH 0 (ha_tina.cc info); rows: the "
                         "lines of the data file")
    if t.engine == "innodb":
        _innodb(ds, t, row, frm if frm is not None else _frm_bytes(ds, files))
    if t.engine == "archive" and info.get("uncompressed_bytes") and info.get("rows"):
        row.raw_row_bytes = info["uncompressed_bytes"] / info["rows"]
        row.raw_source = f"{t.key}: ARCHIVE's row stream (ha_archive.cc pack_row, with its 4-byte length)"
    if t.engine == "rocksdb" and info.get("rows") is not None:
        row.notes.append("MyRocks: rows are the primary key's entries in the SSTs' statistics, as the server "
                         "counts them: versions that a compaction has not merged yet are counted too")
    if t.engine == "rocksdb" and info.get("data_size") and info.get("rows"):
        row.notes.append("MyRocks: raw key+value bytes per row = "
                         f"{info['data_size'] / info['rows']:.1f} (all indexes)")
    if row.rows is None and not any(n.startswith("InnoDB: rows not known") for n in row.notes):
        why = next((w for p in t.files for w in (ds.file(p).warnings if ds.file(p) else []) if "encrypted" in w), None)
        hint = " (read with --keyfile)" if why and "key file" in why else ""
        row.notes.append("rows not known" + (f": {why}{hint}" if why else " (see the files' errors and warnings)"))
    return row


def _definitions(ds: Dataset) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for e in ds.files:
        if e.engine == "server" and e.database and e.table and e.role in ("table_definition", "partition_definition"):
            out.setdefault((e.database, e.table), []).append(e.path)
    return out


def _tables(ds: Dataset) -> list[TableEntry]:
    """The dataset's tables, plus InnoDB tables that live in the system tablespace
    (``innodb_file_per_table=OFF``): their indexes are in ``ibdata1``, which no table owns."""
    out = list(ds.tables)
    have = {(t.engine, t.database, t.name) for t in out}
    for e in ds.files:
        if e.engine != "innodb" or e.role != "system_tablespace":
            continue
        sec = e.sections.get("innodb") or {}
        for i in sec.get("indexes") or []:
            full = i.get("table") or ""
            db, _, name = full.partition(".")
            if not db or not name or db.startswith("SYS_") or name.startswith("SYS_") \
                    or ("innodb", db, name) in have:
                continue
            have.add(("innodb", db, name))
            out.append(TableEntry(engine="innodb", database=db, name=name, files=[e.path],
                                  info={"system_tablespace": e.path}))
    return out


def _share_raw(rows: list[TwinRow]) -> None:
    """A table that has no raw row size of its own takes it from a twin of the same name,
    else from the first twin that has one (its source named)."""
    own = [r for r in rows if r.raw_row_bytes]
    if not own:
        return
    for r in rows:
        if r.raw_row_bytes is None:
            src = next((o for o in own if o.name == r.name), own[0])
            r.raw_row_bytes, r.raw_source = src.raw_row_bytes, src.raw_source


def _order(rows: list[TwinRow]) -> list[TwinRow]:
    """Smallest footprint per row first (the field note's order), tables without rows last."""
    return sorted(rows, key=lambda r: (r.bytes_per_row is None, r.bytes_per_row or 0.0, r.table))


def twins(ds: Dataset) -> list[list[TwinRow]]:
    """Groups of tables that share a name across schemas or engines (two or more), the
    smallest footprint per row first, each group's rows given the raw row size of the member
    that knows it."""
    definitions = _definitions(ds)
    by_name: dict[str, list[TableEntry]] = {}
    for t in _tables(ds):
        by_name.setdefault(t.name, []).append(t)
    groups = []
    for name in sorted(by_name):
        ts = by_name[name]
        if len({(t.engine, t.database) for t in ts}) < 2:
            continue
        rows = _order([_figures(ds, t, definitions) for t in sorted(ts, key=lambda t: (t.database, t.engine))])
        _share_raw(rows)
        groups.append(rows)
    return groups


def column_signature(cols: FrmColumns) -> tuple:
    """What makes two tables' columns the same: each column's name (as the server compares
    names: case-insensitively), type, length, scale, nullability, signedness, collation,
    ENUM/SET values and whether it is stored, in order."""
    return tuple((f.name.lower(), f.real_type, f.length, f.pack_length, f.decimals, f.nullable, f.unsigned,
                  f.collation_number, f.interval, f.stored, f.geometry_type, f.data_type_info)
                 for f in cols.fields)


def column_twins(ds: Dataset, name_groups: list[list[TwinRow]] | None = None) -> list[TwinGroup]:
    """Groups of tables whose ``.frm`` define the same columns in several schemas or engines
    (two tables of one engine in one schema are not a group, as for names), leaving out a
    group that holds exactly the tables of a name group."""
    definitions = _definitions(ds)
    if name_groups is None:
        name_groups = twins(ds)
    named = {frozenset(r.table for r in g) for g in name_groups}
    by_sig: dict[tuple, list[tuple[TableEntry, bytes, FrmColumns]]] = {}
    for t in _tables(ds):
        frm = _frm_bytes(ds, definitions.get((t.database, t.name), []))
        if frm is None:
            continue
        try:
            cols = read_frm_columns(frm)
        except (FrmError, ValueError, IndexError):
            continue
        if not cols.fields:
            continue
        by_sig.setdefault(column_signature(cols), []).append((t, frm, cols))
    groups = []
    for members in by_sig.values():
        if len({(t.engine, t.database) for t, _, _ in members}) < 2 \
                or frozenset(t.key for t, _, _ in members) in named:
            continue
        rows = _order([_figures(ds, t, definitions, frm) for t, frm, _ in members])
        _share_raw(rows)
        names = members[0][2].names()
        label = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        groups.append(TwinGroup(name=f"same columns ({label})", by="columns", rows=rows, columns=names))
    groups.sort(key=lambda g: (-len(g.rows), g.name))
    return groups


def all_groups(ds: Dataset) -> list[TwinGroup]:
    """The name groups, then the columns groups."""
    named = twins(ds)
    out = [TwinGroup(name=posixpath.basename(g[0].table.split(".", 1)[1]), by="name", rows=g) for g in named]
    return out + column_twins(ds, named)


def compare_json(ds: Dataset) -> dict:
    """``dbxray compare --json``."""
    return {"tool": "dbxray", "schema_version": 1, "kind": "compare", "root": ds.root,
            "groups": [g.to_json() for g in all_groups(ds)]}
