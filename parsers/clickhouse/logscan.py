"""Log-family tables in the scan (parsers/clickhouse/scan.py): the files' roles,
units (one per compressed block, owner = column), JSON sections and the
table's figures named as system.tables / system.columns name them
(:mod:`.logtable` says which of them the engine reports and which are computed)."""
from __future__ import annotations

import os

import numpy as np

from ..arrays import distinct
from ..model import Dataset, FileEntry
from .blocks import METHOD_NAMES
from .blockunits import block_units
from .filechecker import SIZES_FILE_NAME
from .logmarks import MARKS_FILE_NAME
from .logtable import LogTable
from .nativeindex import DATA_FILE_NAME, INDEX_FILE_NAME
from .section import ClickHouseFileSection, ClickHouseLogFile, ClickHouseTable, ClickHouseTableColumn

ENGINE = "clickhouse"

TOTAL_ROWS_NOTE = {
    "Log": "system.tables.total_rows as the server gives it once it has loaded __marks.mrk (after the "
           "table's first read or write; NULL before): the last mark's rows of the first data file",
    "StripeLog": "system.tables.total_rows as the server gives it once it has loaded index.mrk (after the "
                 "table's first read or write; NULL before): the sum of the index blocks' rows",
    "TinyLog": "the engine gives NULL for a TinyLog holding data (0 when empty); computed_rows is counted "
               "from the first stream when its values have a fixed width",
}
COLUMN_NOTE = {
    "Log": "compressed_bytes is system.columns.data_compressed_bytes (the sizes.json sizes of the column's "
           "files); the engine reports 0 uncompressed bytes; 'computed' is the block walk",
    "StripeLog": "StripeLog reports 0 per column in system.columns; 'computed' is the column's blocks of "
                 "data.bin between its index.mrk mark and the next",
}
COLUMN_NOTE["TinyLog"] = COLUMN_NOTE["Log"]


def _units(entry: FileEntry, blocks, owners: np.ndarray) -> None:
    entry.units = block_units(blocks, owners)
    entry.kind_names = {int(m): METHOD_NAMES.get(int(m), f"0x{int(m):02x}") for m in distinct(blocks.methods)}


def log_block_sizes(lt: LogTable, path: str) -> dict[str, dict[str, list[np.ndarray]]]:
    """ClickHouseFacts.block_sizes of a Log-family table: the table folder's path ->
    column -> the stored size of each of its blocks, one array per data file."""
    out: dict[str, list[np.ndarray]] = {}
    for f in lt.files.values():
        if f.blocks is None:
            continue
        if lt.engine == "StripeLog":
            owners = lt.data_owners if lt.data_owners is not None else np.full(len(f.blocks), -1)
            for i, c in enumerate(lt.columns):
                out.setdefault(c.name, []).append(f.blocks.stored[owners == i])
        elif f.column is not None:
            out.setdefault(f.column, []).append(f.blocks.stored)
    return {path: out}


def log_table_json(dataset: Dataset, t, lt: LogTable, entries: dict[str, FileEntry], oid, reg,
                   errors: list[str], ddl_cols: dict, rel) -> ClickHouseTable:
    """Fills the folder's file entries and returns the table's JSON object."""
    reg_files = set(reg.files)
    for name, e in entries.items():
        e.database, e.table = t.database, t.name
        if e.path not in reg_files:
            reg_files.add(e.path)
            reg.files.append(e.path)
        if name.endswith(".bin"):
            e.role = "table_data"
        elif name in (MARKS_FILE_NAME, INDEX_FILE_NAME):
            e.role = "marks"
        elif name in (SIZES_FILE_NAME, "format_version.txt"):
            e.role = "table_metadata"
        e.sections[ENGINE] = ClickHouseFileSection(table_engine=lt.engine)
    for prob in lt.problems:
        own = entries.get(prob.file) if prob.file else None
        target = own or entries.get(SIZES_FILE_NAME)
        msg = (f"{lt.engine} table {t.database}.{t.name}: "
               + (f"{prob.file}: " if prob.file and own is None else "") + prob.message)
        if target is not None:
            target.add_error(msg, prob.offset if own is not None else None)
            errors.append(target.errors[-1])
        else:
            where = rel(os.path.join(lt.abspath, prob.file or ""))
            full = f"{where}: {msg}"
            dataset.errors.append(full)
            errors.append(full)

    files_json = []
    for f in lt.files.values():
        fj = {"file": f.name, "stream": f.stream, "column": f.column, "size": f.size,
              "recorded_size": f.recorded_size}
        if f.blocks is not None:
            fj.update({"blocks": len(f.blocks), "compressed_bytes": f.blocks.compressed_bytes,
                       "uncompressed_bytes": f.blocks.uncompressed_bytes, "codecs": f.blocks.codec_counts()})
        if lt.engine == "Log":
            fj["marks"] = len(f.marks) if f.marks is not None else None
        files_json.append(ClickHouseLogFile.of(fj))
        e = entries.get(f.name)
        if e is None or f.blocks is None:
            continue
        sec = e.sections[ENGINE]
        sec.update({"recorded_size": f.recorded_size, "blocks": len(f.blocks),
                    "compressed_bytes": f.size, "uncompressed_bytes": f.blocks.uncompressed_bytes,
                    "codecs": f.blocks.codec_counts(), "checksums_verified": f.blocks.checksum_ok is not None})
        if f.name == DATA_FILE_NAME and lt.engine == "StripeLog":
            local = lt.data_owners if lt.data_owners is not None else np.full(len(f.blocks), -1, dtype=np.int32)
            ids = np.array([oid(c.name) for c in lt.columns] + [-1], dtype=np.int32)
            owners = ids[np.where(local >= 0, local, len(lt.columns))]
            _units(e, f.blocks, owners)
            e.owner_names = {oid(c.name): c.name for c in lt.columns}
            sec.update({"marks_file": INDEX_FILE_NAME, "marks": len(lt.index) if lt.index is not None else None})
        else:
            owner = oid(f.column) if f.column is not None else -1
            _units(e, f.blocks, np.full(len(f.blocks), owner, dtype=np.int32))
            e.owner_names = {owner: f.column} if f.column is not None else {}
            sec.update({"column": f.column, "stream": f.stream})
            if lt.engine == "Log":
                sec.update({"marks_file": MARKS_FILE_NAME, "marks": len(f.marks) if f.marks is not None else None})
    if lt.index_blocks is not None and INDEX_FILE_NAME in entries:
        e = entries[INDEX_FILE_NAME]
        _units(e, lt.index_blocks, np.full(len(lt.index_blocks), -1, dtype=np.int32))
        e.sections[ENGINE].update({"blocks": len(lt.index_blocks), "compressed_bytes": e.apparent_bytes,
                                   "uncompressed_bytes": lt.index_blocks.uncompressed_bytes,
                                   "codecs": lt.index_blocks.codec_counts(),
                                   "marks": len(lt.index) if lt.index is not None else None})
    if lt.marks is not None and MARKS_FILE_NAME in entries:
        entries[MARKS_FILE_NAME].sections[ENGINE]["marks"] = int(lt.marks.shape[0])

    cols_json = []
    for c in lt.columns:
        stripe = lt.engine == "StripeLog"
        cj = {"name": c.name, "type": c.type or (ddl_cols[c.name].type if c.name in ddl_cols else ""),
              "compressed_bytes": 0 if stripe else c.engine_compressed_bytes,
              "uncompressed_bytes": 0, "marks_bytes": 0,
              "codec": ddl_cols[c.name].codec if c.name in ddl_cols else "",
              "codecs": dict(c.codecs)}
        if c.name in ddl_cols:
            cj["default_kind"] = ddl_cols[c.name].default_kind
        cj["computed"] = {"compressed_bytes": c.compressed_bytes, "uncompressed_bytes": c.uncompressed_bytes,
                          "blocks": c.blocks}
        cj["note"] = COLUMN_NOTE[lt.engine]
        cols_json.append(ClickHouseTableColumn.of(cj))
        oid(c.name)

    ddl = t.ddl
    out = {
        "database": t.database, "table": t.name, "uuid": t.uuid, "engine": lt.engine,
        "path": rel(lt.abspath),
        "metadata_path": rel(t.metadata_path) if t.metadata_path else None,
        "database_engine": t.db_engine,
        "partition_key": "", "sorting_key": "", "primary_key": "",
        "settings": dict(ddl.settings) if ddl else {},
        "total_rows": lt.total_rows, "total_bytes": lt.total_bytes,
        "parts": [], "columns": cols_json, "errors": errors,
        "log_files": files_json,
    }
    if lt.engine == "Log":
        out["marks_count"] = int(lt.marks.shape[0]) if lt.marks is not None else None
    if lt.engine == "StripeLog":
        out["index_blocks"] = len(lt.index) if lt.index is not None else None
    if lt.engine == "TinyLog":
        out["computed_rows"] = lt.computed_rows
    out["total_rows_note"] = TOTAL_ROWS_NOTE[lt.engine]
    if lt.notes:
        out["notes"] = list(lt.notes)
    reg.info.update({"uuid": t.uuid, "engine": lt.engine, "total_rows": lt.total_rows,
                     "total_bytes": lt.total_bytes})
    return ClickHouseTable.of(out)
