"""Engine comparison: the same table (same name) held in several schemas or engines
of one data dir, side by side: rows, the bytes really on disk, allocated bytes,
what information_schema would report (computed the way each engine computes it),
bytes per row and the ratio to the raw row size.

Figures come from what each engine's parser put in the dataset (``TableEntry.info``,
the files' sections); where an engine's parser does not give a figure it is None,
never guessed:

* ARCHIVE (ha_archive.cc ``info``): TABLE_ROWS = the header's rows, DATA_LENGTH = the
  file's st_size; the raw row = the inflated row stream (each packed row with its
  4-byte length) per row.
* InnoDB (ha_innobase::info, dict_stats): DATA_LENGTH = the clustered index's pages x
  the page size, INDEX_LENGTH = the other indexes' pages x the page size; TABLE_ROWS is a
  sampled estimate in the server, here the clustered index's leaf records (exact).
* MyRocks (ha_rocksdb::info): the saved index statistics (parsers/rocksdb).
* TokuDB: the header estimates (parsers/tokudb/tables.py).
* CSV: rows in the data file; information_schema's TABLE_ROWS 2 / DATA_LENGTH 0 are not
  reproduced (None).

A table's files are its engine's files plus its ``.frm`` / ``.par`` (the server's).
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from .model import Dataset, TableEntry

#: index names of InnoDB's clustered index
CLUSTERED = ("PRIMARY", "GEN_CLUST_INDEX")


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
    raw_row_bytes: float | None = None     # raw bytes per row (from the twin that knows it)
    raw_source: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def bytes_per_row(self) -> float | None:
        return self.allocated_bytes / self.rows if self.rows else None

    @property
    def ratio_to_raw(self) -> float | None:
        bpr = self.bytes_per_row
        return bpr / self.raw_row_bytes if bpr is not None and self.raw_row_bytes else None

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


def _innodb(ds: Dataset, t: TableEntry, row: TwinRow) -> None:
    clustered = others = None
    page = 0
    key = t.key
    for path in t.files:
        e = ds.file(path)
        sec = (e.sections.get("innodb") if e is not None else None) or {}
        page = int(sec.get("page_size") or page or 0)
        idx = [i for i in (sec.get("indexes") or []) if i.get("table") in (key, None)]
        if not idx:
            continue
        first = next((i for i in idx if i.get("name") in CLUSTERED), None) or min(idx, key=lambda i: i["index_id"])
        clustered = (clustered or 0) + int(first.get("pages") or 0)
        others = (others or 0) + sum(int(i.get("pages") or 0) for i in idx if i is not first)
        row.rows = (row.rows or 0) + int(first.get("records") or 0)
    if clustered is not None and page:
        row.is_data_length = clustered * page
        row.is_index_length = (others or 0) * page
        row.is_table_rows = row.rows
        row.notes.append("InnoDB: TABLE_ROWS is the leaf records counted (the server shows a sampled estimate)")


def _figures(ds: Dataset, t: TableEntry, definitions: dict[tuple[str, str], list[str]]) -> TwinRow:
    files = list(t.files) + definitions.get((t.database, t.name), [])
    entries = [e for e in (ds.file(p) for p in files) if e is not None]
    info = t.info or {}
    row = TwinRow(table=t.key, engine=t.engine, files=files, rows=info.get("rows"),
                  disk_bytes=sum(int(e.apparent_bytes) for e in entries),
                  allocated_bytes=sum(int(e.allocated_bytes) for e in entries),
                  is_table_rows=None, is_data_length=None, is_index_length=None)
    reported = info.get("information_schema") or info.get("engine_reported")
    if reported:
        row.is_table_rows = reported.get("table_rows")
        row.is_data_length = reported.get("data_length")
        row.is_index_length = reported.get("index_length")
    if t.engine == "innodb":
        _innodb(ds, t, row)
    if t.engine == "archive" and info.get("uncompressed_bytes") and info.get("rows"):
        row.raw_row_bytes = info["uncompressed_bytes"] / info["rows"]
        row.raw_source = f"{t.key}: ARCHIVE's row stream (ha_archive.cc pack_row, with its 4-byte length)"
    if t.engine == "rocksdb" and info.get("data_size") and info.get("rows"):
        row.notes.append("MyRocks: raw key+value bytes per row = "
                         f"{info['data_size'] / info['rows']:.1f} (all indexes)")
    return row


def twins(ds: Dataset) -> list[list[TwinRow]]:
    """Groups of tables that share a name across schemas or engines (two or more), each
    group's rows given the raw row size of the member that knows it."""
    definitions: dict[tuple[str, str], list[str]] = {}
    for e in ds.files:
        if e.engine == "server" and e.database and e.table and e.role in ("table_definition", "partition_definition"):
            definitions.setdefault((e.database, e.table), []).append(e.path)
    by_name: dict[str, list[TableEntry]] = {}
    for t in ds.tables:
        by_name.setdefault(t.name, []).append(t)
    groups = []
    for name in sorted(by_name):
        ts = by_name[name]
        if len({(t.engine, t.database) for t in ts}) < 2:
            continue
        rows = [_figures(ds, t, definitions) for t in sorted(ts, key=lambda t: (t.database, t.engine))]
        raw = next((r for r in rows if r.raw_row_bytes), None)
        if raw is not None:
            for r in rows:
                if r.raw_row_bytes is None:
                    r.raw_row_bytes, r.raw_source = raw.raw_row_bytes, raw.raw_source
        groups.append(rows)
    return groups


def compare_json(ds: Dataset) -> dict:
    """``dbxray compare --json``."""
    return {"tool": "dbxray", "schema_version": 1, "kind": "compare", "root": ds.root,
            "groups": [{"name": posixpath.basename(g[0].table.split(".", 1)[1]), "tables": [r.to_json() for r in g]}
                       for g in twins(ds)]}
