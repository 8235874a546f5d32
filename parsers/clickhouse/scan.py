"""ClickHouse engine entry point: ``analyze(dataset, files, ctx)``.

Finds the tables and parts under the scanned path (:mod:`.datadir`), reads
every part (:mod:`.part`: metadata, marks, block headers only), counts sizes
as the engine does (:mod:`.sizes`) and fills

* per ``.bin`` file: ``units`` (one record per compressed block), kind and
  owner names, database/table, a ``clickhouse`` JSON section, and ``detail``;
* per compressed marks file (``.cmrk*``) and ``primary.cidx``: ``units`` too,
  one per compressed block of its own walk;
* per table: ``dataset.table("clickhouse", db, table)``;
* ``dataset.sections["clickhouse"] = {"tables": [...]}`` with part and column
  fields named as system.parts / system.parts_columns / system.columns;
* ``dataset.facts["clickhouse"]``: what the views draw beyond the JSON (facts.py);
* ``dataset.detail["clickhouse"]``: the parsed objects (parser-internal).

Problems are recorded against the file they concern (part, file, offset);
the rest of the table is still reported.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

import numpy as np

from ..arrays import distinct
from .. import parallel
from ..model import Dataset, FileEntry, ScanContext
from .blocks import METHOD_NAMES
from .facts import ClickHouseFacts
from .section import (ClickHouseFileSection, ClickHousePart, ClickHousePartColumn, ClickHouseSection,
                      ClickHouseSubcolumn, ClickHouseTable, ClickHouseTableColumn)
from .datadir import (Issue, TableInfo, data_links, find_datadir, mark_outdated, part_dirs, read_metadata)
from .marks import marks_flavour
from .columns import Column
from .ddl import key_text
from .blockunits import block_units as _units_for
from .logscan import log_block_sizes, log_table_json
from .logtable import LOG_ENGINES, is_log_table_dir, read_log_table
from .primary import PrimaryIndexError, key_expressions, key_types, read_key_value
from ..fileio import FileReadError
from .part import PART_NAME_RE, Part, compact_block_owners, read_part, walk_file_blocks
from .statistics import summary as stats_summary
from ..codecs.ch_cityhash import c_available as cityhash_in_c
from .streams import unescape_for_file_name
from .sizes import HIST_EDGES, ColumnSize, PartSizes, histogram, part_sizes

ENGINE = "clickhouse"
#: Block checksums are verified when the scan asks for it and the .bin files
#: total at most this many bytes: verifying reads every payload, so the
#: budget bounds the scan's I/O (4 GiB: a few seconds from disk) with
#: CityHash128 in C (clickhouse-cityhash, GB/s), and its CPU time with the
#: pure port (~20 MB/s: 256 MiB).
VERIFY_BUDGET_C = 4 << 30
VERIFY_BUDGET = 256 << 20
_CH_FILE = re.compile(r"\.(bin|mrk\d?|cmrk\d?|txt|idx|idx2|cidx|json|dat|packed)$")


@dataclass
class TableResult:
    """What the scan made of one table (kept in dataset.detail for the views)."""

    info: TableInfo
    sizes: dict[str, PartSizes] = field(default_factory=dict)      # part relpath -> sizes
    column_names: list[str] = field(default_factory=list)          # owner id -> column name
    json: dict = field(default_factory=dict)


def _role_for(name: str) -> str:
    low = name.lower()
    if low.endswith(".bin"):
        return "part_column_data"
    if marks_flavour(low):
        return "marks"
    if low in ("primary.idx", "primary.cidx"):
        return "primary_index"
    return "part_metadata"


def _adopt_orphans(dataset: Dataset, files: list[FileEntry]) -> list[FileEntry]:
    """Files of part folders that detection did not recognise (e.g. a part
    missing checksums.txt): claimed for ClickHouse so they are shown."""
    out = list(files)
    for f in dataset.files:
        if f.engine is not None:
            continue
        parts = f.path.split("/")
        if len(parts) >= 2 and (PART_NAME_RE.match(parts[-2]) or parts[-2].endswith(".proj")) \
                and _CH_FILE.search(parts[-1]):
            f.engine = ENGINE
            f.role = _role_for(parts[-1])
            out.append(f)
    return out


def _rel(dataset: Dataset, abspath: str) -> str:
    rel = os.path.relpath(abspath, dataset.root)
    return rel.replace(os.sep, "/")


def analyze(dataset: Dataset, files: list[FileEntry], ctx: ScanContext) -> None:
    """Fill the ClickHouse file entries, tables and the ``clickhouse`` section."""
    files = _adopt_orphans(dataset, files)
    real_dir: dict[str, str] = {}

    def real_path(abspath: str) -> str:
        """realpath of the file's directory (cached: one per folder) + its name."""
        head, tail = os.path.split(abspath)
        d = real_dir.get(head)
        if d is None:
            d = real_dir[head] = os.path.realpath(head)
        return os.path.join(d, tail)

    by_dir: dict[str, list[FileEntry]] = {}
    dir_rel: dict[str, str] = {}
    entry_of: dict[str, FileEntry] = {}
    for f in dataset.files:
        if f.engine in (None, ENGINE):
            entry_of[real_path(f.abspath)] = f
    for f in files:
        d = os.path.dirname(real_path(f.abspath))
        by_dir.setdefault(d, []).append(f)
        dir_rel.setdefault(d, f.path.rsplit("/", 1)[0] if "/" in f.path else "")

    # the ClickHouse path(s): at or above the root, or below it (a folder holding several engines)
    datadirs: list[str] = []
    top = find_datadir(dataset.root)
    if top:
        datadirs.append(top)
    else:
        looked: dict[str, str | None] = {}
        for d in by_dir:
            if d not in looked:
                looked[d] = find_datadir(d, max_up=6)
            if looked[d] and looked[d] not in datadirs:
                datadirs.append(looked[d])
    datadir = datadirs[0] if datadirs else None
    tables: dict[str, TableInfo] = {}
    issues: list[Issue] = []
    links: dict[str, tuple[str, str]] = {}
    for dd in datadirs:
        t_found, t_issues = read_metadata(dd)
        tables.update(t_found)
        issues += t_issues
        l_found, link_issues = data_links(dd)
        links.update(l_found)
        issues += link_issues

    bin_bytes = sum(f.apparent_bytes for f in files if f.role == "part_column_data")
    in_c = cityhash_in_c()
    budget = VERIFY_BUDGET_C if in_c else VERIFY_BUDGET
    # ScanContext.block_walk False (the command line's default, without --full): no block header read,
    # the figures the engine reports from checksums.txt; the blocks are walked when asked (walk_blocks)
    walk = bool(getattr(ctx, "block_walk", True))
    wanted = walk and bool(ctx.verify_checksums) and getattr(ctx, "depth", "full") == "full"   # --summary reads none
    verify = wanted and bin_bytes <= budget
    if wanted and not verify:
        how = "verifying would read every payload" if in_c else \
            f"CityHash128 runs in pure Python here (pip install clickhouse-cityhash raises it to {VERIFY_BUDGET_C} bytes)"
        dataset.errors.append(f"clickhouse: block checksums not verified: {bin_bytes} bytes of .bin files "
                              f"is over the verification budget of {budget} bytes ({how})")

    # part folders -> tables
    candidates = []
    for d in part_dirs(set(by_dir)):
        names = {os.path.basename(f.abspath) for f in by_dir[d]}
        base = os.path.basename(d)
        if PART_NAME_RE.match(base) or "checksums.txt" in names or "columns.txt" in names or base.endswith(".proj"):
            candidates.append(d)
    jobs: list[tuple[list, tuple]] = []
    for d in candidates:
        parent = os.path.dirname(d)
        state = "active"
        if os.path.basename(parent) == "detached":
            parent, state = os.path.dirname(parent), "detached"
        t = tables.get(parent)
        if t is None:
            db, name = links.get(parent, ("", os.path.basename(parent) or parent))
            t = TableInfo(db, name, data_path=parent)
            if not PART_NAME_RE.match(os.path.basename(d)) and os.path.basename(d) != "detached":
                pass
            tables[parent] = t
        rel = dir_rel.get(d) or _rel(dataset, d)
        t_parts = t.detached if state == "detached" else t.parts
        jobs.append((t_parts, (d, rel, state, t.index_granularity, verify, walk)))
    # parts are independent: read on every core (parsers/parallel.py), kept in this order
    # (without the block walk a part's .bin files are not read: the metadata and marks are a few
    # KB a part, and below MIN_BYTES of them forking workers costs more than it saves)
    weights = [sum(int(f.apparent_bytes) for f in by_dir.get(d, ()) if walk or f.role != "part_column_data")
               for _, (d, *_rest) in jobs]
    pctx = ctx if walk or sum(weights) >= parallel.MIN_BYTES else replace(ctx, workers=1)
    for k, part in enumerate(parallel.map_calls(_read_part, [a for _, a in jobs], pctx, weights)):
        jobs[k][0].append(part)
        ctx.check()
        ctx.report(k + 1, len(candidates), f"read part {jobs[k][1][1]}")

    _read_log_tables(by_dir, set(candidates), tables, links, verify, ctx)

    results: list[TableResult] = []
    root = os.path.realpath(dataset.root)
    for path, t in sorted(tables.items(), key=lambda kv: (kv[1].database, kv[1].name)):
        meta_inside = bool(t.metadata_path) and (os.path.realpath(t.metadata_path) + os.sep).startswith(root + os.sep)
        if not (t.parts or t.detached or meta_inside or t.log is not None):
            continue          # a table of the surrounding data dir that this scan did not cover
        mark_outdated(t.parts)
        if t.data_path and os.path.isfile(os.path.join(t.data_path, "format_version.txt")):
            try:
                with open(os.path.join(t.data_path, "format_version.txt"), "rb") as fh:
                    t.format_version = fh.read(64).decode("ascii", "replace").strip()
            except OSError:
                pass
        results.append(_table_result(dataset, t, by_dir, entry_of, walk))
        _attach_format_version(dataset, t, entry_of)

    for iss in issues:
        _issue_to_entry(dataset, entry_of, iss)
    dataset.sections[ENGINE] = ClickHouseSection(tables=[r.json for r in results])
    dataset.detail[ENGINE] = {"tables": results, "datadir": datadir, "datadirs": datadirs,
                              "checksums_verified": verify, "walked": walk}
    dataset.facts[ENGINE] = ClickHouseFacts(blocks_walked=walk, block_sizes={
        (r.info.database, r.info.name): ({path: {c.name: list(c.block_sizes) for c in ps.columns}
                                          for path, ps in r.sizes.items()} if r.info.log is None
                                         else log_block_sizes(r.info.log, _rel(dataset, r.info.log.abspath)))
        for r in results})


def _read_part(d: str, rel: str, state: str, index_granularity, verify: bool, walk: bool = True):
    """One part folder (part.py ``read_part``), as the part loop calls it."""
    return read_part(d, rel, state=state, index_granularity=index_granularity, verify=verify, walk=walk)


def _attach_format_version(dataset: Dataset, t: TableInfo, entry_of: dict[str, FileEntry]) -> None:
    """The table folder's ``format_version.txt`` (MergeTreeData: the data format
    version of the table's parts) belongs to the table, not to a part."""
    if not t.data_path:
        return
    e = entry_of.get(os.path.join(os.path.realpath(t.data_path), "format_version.txt"))
    if e is None:
        return
    e.engine, e.role = ENGINE, "table_metadata"
    e.database, e.table = t.database, t.name
    reg = dataset.table(ENGINE, t.database, t.name)
    if e.path not in reg.files:
        reg.files.append(e.path)


def _read_log_tables(by_dir: dict[str, list[FileEntry]], part_folders: set[str], tables: dict[str, TableInfo],
                     links: dict[str, tuple[str, str]], verify: bool, ctx: ScanContext) -> None:
    """Log-family table folders (TinyLog, Log, StripeLog: logtable.py) among the
    scanned folders: by their files, or by the table's DDL."""
    for d in sorted(by_dir):
        if d in part_folders:
            continue
        try:
            names = set(os.listdir(d))
        except OSError:
            names = {os.path.basename(f.abspath) for f in by_dir[d]}
        t = tables.get(d)
        if not (is_log_table_dir(names) or (t is not None and t.engine in LOG_ENGINES)):
            continue
        if t is None:
            db, name = links.get(d, ("", os.path.basename(d) or d))
            t = tables[d] = TableInfo(db, name, data_path=d)
        cols = [Column(c.name, c.type) for c in t.ddl.columns] if t.ddl else None
        t.log = read_log_table(d, names, t.engine or None, cols, verify=verify)
        ctx.check()


def _issue_to_entry(dataset: Dataset, entry_of: dict[str, FileEntry], iss: Issue, table_errors: list | None = None):
    e = entry_of.get(os.path.realpath(iss.path)) if iss.path else None
    if e is not None:
        e.add_error(iss.message, iss.offset)
        msg = e.errors[-1]
    else:
        where = _rel(dataset, iss.path) if iss.path else "clickhouse"
        if iss.offset is not None:
            where += f" @ offset {iss.offset}"
        msg = f"{where}: {iss.message}"
        dataset.errors.append(msg)
    if table_errors is not None:
        table_errors.append(msg)


def _table_result(dataset: Dataset, t: TableInfo, by_dir: dict[str, list[FileEntry]],
                  entry_of: dict[str, FileEntry], walked: bool = True) -> TableResult:
    res = TableResult(t)
    if t.log is not None:
        return _log_table_result(dataset, t, res, by_dir, entry_of)
    names: list[str] = [c.name for c in t.ddl.columns] if t.ddl else []
    if not names:
        newest = sorted(t.parts, key=lambda p: (p.state != "active", -(p.info.max_block if p.info else 0)))
        names = [c.name for c in newest[0].columns] if newest else []
    res.column_names = list(names)
    owner_id = {n: i for i, n in enumerate(names)}

    def oid(name: str) -> int:
        if name not in owner_id:
            owner_id[name] = len(res.column_names)
            res.column_names.append(name)
        return owner_id[name]

    errors: list[str] = []
    reg = dataset.table(ENGINE, t.database, t.name)
    for iss in t.issues:
        _issue_to_entry(dataset, entry_of, iss, errors)
    if t.metadata_path:
        e = entry_of.get(os.path.realpath(t.metadata_path))
        if e is not None:
            if e.engine is None:          # store/<3>/<db uuid>/<table>.sql of an Atomic database
                e.engine, e.role = ENGINE, "table_metadata"
            e.database, e.table = t.database, t.name
            if e.path not in reg.files:
                reg.files.append(e.path)

    parts_json = []
    for p in sorted(t.parts, key=lambda p: p.name) + sorted(t.detached, key=lambda p: p.name):
        sizes = part_sizes(p)
        res.sizes[p.relpath] = sizes
        pj = _part_json(p, sizes)
        pj["partition"] = partition_value(p, t)
        pj["minmax"] = minmax_values(p, t)
        pj["projection_parts"] = []
        for proj in p.projections:
            ps = part_sizes(proj)
            res.sizes[proj.relpath] = ps
            pj["projection_parts"].append(_part_json(proj, ps, projection=True))
            _fill_entries(dataset, t, proj, ps, by_dir, entry_of, oid, reg, errors, parent=p)
        _fill_entries(dataset, t, p, sizes, by_dir, entry_of, oid, reg, errors)
        parts_json.append(pj)

    active = [p for p in t.parts if p.state == "active"]
    cols_json = []
    ddl_cols = {c.name: c for c in t.ddl.columns} if t.ddl else {}
    for name in names:
        tot = {"compressed_bytes": 0, "uncompressed_bytes": 0, "marks_bytes": 0}
        comp = {"compressed_bytes": 0, "uncompressed_bytes": 0, "blocks": 0}
        codecs: dict[str, int] = {}
        ctype = ddl_cols[name].type if name in ddl_cols else ""
        for p in active:
            for cs in res.sizes[p.relpath].columns:
                if cs.name != name:
                    continue
                ctype = ctype or cs.type
                tot["compressed_bytes"] += cs.compressed_bytes
                tot["uncompressed_bytes"] += cs.uncompressed_bytes
                tot["marks_bytes"] += cs.marks_bytes
                for k, v in (cs.computed["codecs"] if cs.computed else cs.codecs).items():
                    codecs[k] = codecs.get(k, 0) + v
                if cs.computed:
                    for k in comp:
                        comp[k] += cs.computed[k]
        cj = {"name": name, "type": ctype, **tot,
              "codec": ddl_cols[name].codec if name in ddl_cols else ""}
        if walked:
            cj["codecs"] = codecs
        if name in ddl_cols:
            cj["default_kind"] = ddl_cols[name].default_kind
        if walked and any(p.part_type == "Compact" for p in active):
            cj["compact_parts_computed"] = comp
        cols_json.append(ClickHouseTableColumn.of(cj))

    ddl = t.ddl
    res.json = ClickHouseTable.of({
        "database": t.database,
        "table": t.name,
        "uuid": t.uuid,
        "engine": t.engine,
        "path": _rel(dataset, t.data_path) if t.data_path else None,
        "metadata_path": _rel(dataset, t.metadata_path) if t.metadata_path else None,
        "database_engine": t.db_engine,
        "format_version": t.format_version,
        "partition_key": key_text(ddl.partition_by) if ddl else "",
        "sorting_key": key_text(ddl.order_by) if ddl else "",
        "primary_key": key_text(ddl.primary_key or ddl.order_by) if ddl else "",
        "settings": dict(ddl.settings) if ddl else {},
        "projections": list(ddl.projections) if ddl else [],
        "indices": list(ddl.indices) if ddl else [],
        "active_parts": len(active),
        "total_rows": sum(res.sizes[p.relpath].rows for p in active),
        "total_bytes": sum(res.sizes[p.relpath].bytes_on_disk for p in active),
        "parts": parts_json,
        "columns": cols_json,
        "errors": errors,
    })
    reg.info.update({"uuid": t.uuid, "engine": t.engine, "parts": len(t.parts),
                     "active_parts": len(active), "detached_parts": len(t.detached),
                     "total_rows": res.json["total_rows"], "total_bytes": res.json["total_bytes"]})
    return res


def _log_table_result(dataset: Dataset, t: TableInfo, res: TableResult, by_dir: dict[str, list[FileEntry]],
                      entry_of: dict[str, FileEntry]) -> TableResult:
    """A Log-family table (logscan.py): its folder's files, units and figures."""
    lt = t.log
    res.column_names = [c.name for c in t.ddl.columns] if t.ddl else []
    owner_id = {n: i for i, n in enumerate(res.column_names)}

    def oid(name: str) -> int:
        if name not in owner_id:
            owner_id[name] = len(res.column_names)
            res.column_names.append(name)
        return owner_id[name]

    errors: list[str] = []
    reg = dataset.table(ENGINE, t.database, t.name)
    for iss in t.issues:
        _issue_to_entry(dataset, entry_of, iss, errors)
    if t.metadata_path:
        e = entry_of.get(os.path.realpath(t.metadata_path))
        if e is not None:
            if e.engine is None:
                e.engine, e.role = ENGINE, "table_metadata"
            e.database, e.table = t.database, t.name
            if e.path not in reg.files:
                reg.files.append(e.path)
    d = os.path.realpath(lt.abspath)
    entries = {os.path.basename(f.abspath): f for f in by_dir.get(d, [])}
    ddl_cols = {c.name: c for c in t.ddl.columns} if t.ddl else {}
    res.json = log_table_json(dataset, t, lt, entries, oid, reg, errors, ddl_cols, lambda p: _rel(dataset, p))
    return res


def partition_value(p: Part, t: TableInfo) -> str | None:
    """The partition as system.parts shows it, from partition.dat (the
    partition key values in RowBinary, MergeTreePartition::load)."""
    ddl = t.ddl
    if ddl is None:
        return None
    exprs = key_expressions(ddl.partition_by) if ddl.partition_by else []
    if not exprs:
        return "tuple()"
    types = key_types(exprs, {c.name: c.type for c in ddl.columns})
    if any(x is None for x in types) or "partition.dat" not in p.files:
        return None
    try:
        with open(os.path.join(p.abspath, "partition.dat"), "rb") as fh:
            data = fh.read(1 << 16)
        pos, vals = 0, []
        for ty in types:
            v, pos = read_key_value(data, pos, ty)
            vals.append(f"'{v}'" if isinstance(v, str) else str(v))
    except (OSError, PrimaryIndexError) as e:
        p.problem("partition.dat", f"cannot read the partition value: {e}", getattr(e, "offset", None))
        return None
    return vals[0] if len(vals) == 1 else "(" + ", ".join(vals) + ")"


def minmax_values(p: Part, t: TableInfo) -> dict | None:
    """min and max of each partition-key column from ``minmax_<column>.idx``
    (IMergeTreeDataPart::MinMaxIndex::load: the two values in RowBinary)."""
    if t.ddl is None:
        return None
    types = {c.name: c.type for c in t.ddl.columns}
    out = {}
    for f in sorted(p.files):
        if not (f.startswith("minmax_") and f.endswith(".idx")):
            continue
        col = unescape_for_file_name(f[7:-4])
        if col not in types:
            continue
        try:
            with open(os.path.join(p.abspath, f), "rb") as fh:
                data = fh.read(1 << 16)
            lo, pos = read_key_value(data, 0, types[col])
            hi, _ = read_key_value(data, pos, types[col])
            out[col] = [lo, hi]
        except (OSError, PrimaryIndexError) as e:
            p.problem(f, f"cannot read min/max: {e}", getattr(e, "offset", None))
    return out


#: keys of the ``clickhouse`` JSON that only the block walk gives (``dbxray scan --full``): left out
#: of a scan that did not walk the blocks (the default), per level
BLOCK_WALK_KEYS = {
    "table": (),
    "table_column": ("codecs", "compact_parts_computed"),
    "part": ("block_size_histogram",),
    "part_column": ("codecs", "block_size_histogram", "computed", "note"),
    "stream": ("blocks", "codecs"),
    "file": ("blocks", "codecs", "checksums_verified"),
}


def _column_json(cs: ColumnSize, compact: bool, kind: str, walked: bool = True) -> dict:
    out = {"name": cs.name, "type": cs.type, "serialization_kind": kind, "compressed_bytes": cs.compressed_bytes,
           "uncompressed_bytes": cs.uncompressed_bytes, "marks_bytes": cs.marks_bytes,
           "bytes_on_disk": cs.bytes_on_disk}
    if walked:
        out["codecs"] = dict(cs.codecs)
        out["block_size_histogram"] = histogram(np.concatenate(cs.block_sizes) if cs.block_sizes else None)
    out.update({
           "column_position": cs.column_position, "substreams": list(cs.substreams),
           "filenames": list(cs.filenames),
           "subcolumns": None if cs.subcolumns is None else [
               ClickHouseSubcolumn.of({"name": sc.name, "type": sc.type, "serialization": sc.serialization,
                                       "bytes_on_disk": sc.bytes_on_disk, "compressed_bytes": sc.compressed_bytes,
                                       "uncompressed_bytes": sc.uncompressed_bytes, "marks_bytes": sc.marks_bytes})
               for sc in cs.subcolumns]})
    if compact:
        out["engine_reports_zero"] = True
        if walked:
            out["computed"] = cs.computed
            out["note"] = ("Compact part: the engine reports 0 per column; 'computed' is the split of "
                           "data.bin by the column marks, which the engine does not give")
    else:
        out["streams"] = cs.streams
    return ClickHousePartColumn.of(out)


def _part_json(p: Part, s: PartSizes, projection: bool = False) -> dict:
    info = p.info
    out = {
        "name": p.name,
        "partition_id": info.partition_id if info else None,
        "part_type": p.part_type,
        "active": 1 if p.state in ("active", "projection") else 0,
        "state": p.state,
        "rows": s.rows,
        "marks": s.marks,
        "bytes_on_disk": s.bytes_on_disk,
        "data_compressed_bytes": s.data_compressed_bytes,
        "data_uncompressed_bytes": s.data_uncompressed_bytes,
        "marks_bytes": s.marks_bytes,
        "primary_key_size": s.primary_key_size,
        "files": s.files,
        "secondary_indices_compressed_bytes": s.secondary_indices_compressed_bytes,
        "secondary_indices_uncompressed_bytes": s.secondary_indices_uncompressed_bytes,
        "secondary_indices_marks_bytes": s.secondary_indices_marks_bytes,
        "folder_bytes": s.real_bytes,
        "path": p.relpath,
        "marks_file_extension": p.marks_extension,
        "default_compression_codec": (p.default_codec[6:-1] if p.default_codec and
                                      p.default_codec.startswith("CODEC(") else p.default_codec),
        "checksums_format_version": p.checksums.version if p.checksums else None,
        "checksums_body_method": (METHOD_NAMES.get(p.checksums.body_method)
                                  if p.checksums and p.checksums.body_method is not None else None),
    }
    if p.state == "detached":
        # system.detached_parts.bytes_on_disk is the folder's size (DataPartStorageOnDiskBase::
        # calculateTotalSizeOnDisk, every file, recursively), not the checksums.txt sum
        out["bytes_on_disk"] = s.real_bytes
        out["checksums_bytes"] = s.bytes_on_disk
    if info:
        out.update({"min_block_number": info.min_block, "max_block_number": info.max_block,
                    "level": info.level})
    if not projection:
        out["projections"] = sorted(x.name for x in p.projections)
    kinds = p.serialization.kinds if p.serialization else {}
    out["columns"] = [_column_json(c, p.part_type == "Compact", kinds.get(c.name, "Default"), p.walked)
                      for c in s.columns]
    out["metadata_version"] = p.metadata_version
    out["statistics"] = [e.name for e in p.statistics_packed] if p.statistics_packed is not None else None
    out["statistics_contents"] = {col: stats_summary(st, n) for col, (st, n) in sorted(p.column_statistics.items())}
    if not p.walked:
        return ClickHousePart.of(out)
    out["block_size_histogram"] = {"edges": HIST_EDGES, "counts": histogram(
        np.concatenate([b for c in s.columns for b in c.block_sizes]) if any(
            c.block_sizes for c in s.columns) else None)}
    return ClickHousePart.of(out)


def is_compressed_side_file(name: str) -> bool:
    """Compressed files of a part besides the ``.bin`` streams: compressed marks
    (``.cmrk``/``.cmrk2``/``.cmrk3``/``.cmrk4``: the marks bytes written through a
    CompressedWriteBuffer, ``marks_compression_codec``) and ``primary.cidx``
    (``primary_key_compression_codec``), both framed like ``.bin`` blocks
    (fixtures/clickhouse/FORMAT_NOTES.md sections 2, 4, 5)."""
    flav = marks_flavour(name)
    return (flav is not None and flav.compressed) or name == "primary.cidx"


def _compressed_side_units(p: Part, entries: dict[str, FileEntry], oid) -> None:
    """One unit per compressed block of each ``.cmrk*`` / ``primary.cidx`` file,
    from its own block walk; owner = the column whose stream the marks file
    belongs to (Wide), else none (Compact ``data.cmrk*``, primary index)."""
    owner_of: dict[str, str] = {}
    for sf in p.streams:
        if sf.marks_name and sf.ref.counted:
            owner_of.setdefault(sf.marks_name, sf.ref.column)
    for name, e in entries.items():
        if not is_compressed_side_file(name) or e.units is not None:
            continue
        try:
            table, _ = walk_file_blocks(e.abspath)
        except (FileReadError, OSError) as ex:
            e.add_error(f"part {p.name}: {str(ex).split(': ', 1)[-1]}")
            continue
        for msg, off in table.errors:
            e.add_error(f"part {p.name}: {msg}", off)
        column = owner_of.get(name)
        owner = oid(column) if column is not None else -1
        e.units = _units_for(table, np.full(len(table), owner, dtype=np.int32))
        e.kind_names = {int(m): METHOD_NAMES.get(int(m), f"0x{int(m):02x}") for m in distinct(table.methods)}
        e.owner_names = {owner: column} if column is not None else {}
        e.sections[ENGINE].update({"blocks": len(table), "compressed_bytes": e.apparent_bytes,
                                   "uncompressed_bytes": table.uncompressed_bytes,
                                   "codecs": table.codec_counts()})
        if column is not None:
            e.sections[ENGINE]["column"] = column


def _lazy_sections(p: Part, entries: dict[str, FileEntry], oid) -> None:
    """The file sections of a part read without its block headers: what the engine reports
    per file (compressed size, checksums.txt's uncompressed size, marks), no block, codec
    or unit (BLOCK_WALK_KEYS["file"]); the units come with walk_blocks."""
    done: set[str] = set()
    for sf in p.streams:
        e = entries.get(sf.bin_name) if sf.bin_name else None
        if e is None or not sf.ref.counted and sf.bin_name in done:
            continue
        done.add(sf.bin_name)
        oid(sf.ref.column)
        sec = {"column": sf.ref.column, "stream": sf.ref.stream, "substream": sf.ref.substream,
               "compressed_bytes": sf.bin_size}
        listed = p.listed_uncompressed(sf.bin_name)
        if listed is not None:
            sec["uncompressed_bytes"] = listed
        sec.update({"marks_file": sf.marks_name, "marks": len(sf.marks) if sf.marks is not None else None})
        e.sections[ENGINE].update(sec)
    owner_of: dict[str, str] = {}
    for sf in p.streams:
        if sf.marks_name and sf.ref.counted:
            owner_of.setdefault(sf.marks_name, sf.ref.column)
    for name, e in entries.items():
        if not is_compressed_side_file(name):
            continue
        sec = {"compressed_bytes": e.apparent_bytes}
        listed = p.listed_uncompressed(name)
        if listed is not None:
            sec["uncompressed_bytes"] = listed
        if owner_of.get(name) is not None:
            sec["column"] = owner_of[name]
        e.sections[ENGINE].update(sec)
    cd = p.compact
    if cd is not None and "data.bin" in entries:
        sec = {"compressed_bytes": cd.bin_size}
        listed = p.listed_uncompressed("data.bin")
        if listed is not None:
            sec["uncompressed_bytes"] = listed
        sec.update({"marks_file": cd.marks_name, "marks": len(cd.marks) if cd.marks is not None else None})
        entries["data.bin"].sections[ENGINE].update(sec)


def _fill_entries(dataset: Dataset, t: TableInfo, p: Part, sizes: PartSizes, by_dir, entry_of, oid, reg,
                  table_errors: list, parent: Part | None = None) -> None:
    d = os.path.realpath(p.abspath)
    reg_files = set(reg.files)
    entries = {os.path.basename(f.abspath): f for f in by_dir.get(d, [])}
    for f in entries.values():
        f.database, f.table = t.database, t.name
        if f.path not in reg_files:
            reg_files.add(f.path)
            reg.files.append(f.path)
        f.sections[ENGINE] = ClickHouseFileSection(part=p.name, part_state=p.state, part_type=p.part_type)
        if parent is not None:
            f.sections[ENGINE]["parent_part"] = parent.name
    chk = entries.get("checksums.txt")
    for prob in p.problems:
        target = entries.get(prob.file) if prob.file else None
        msg = f"part {p.name}: {prob.message}"
        if target is None:
            target = chk
            if prob.file:
                msg = f"part {p.name}, file {prob.file}: {prob.message}"
        if target is not None:
            target.add_error(msg, prob.offset if target is entries.get(prob.file) else None)
            table_errors.append(target.errors[-1])
        else:
            where = f"{p.relpath}/{prob.file}" if prob.file else p.relpath
            if prob.offset is not None:
                where += f" @ offset {prob.offset}"
            full = f"{where}: {msg}"
            dataset.errors.append(full)
            table_errors.append(full)

    if not p.walked:
        _lazy_sections(p, entries, oid)
        return
    # units of Wide streams
    for sf in p.streams:
        if not sf.bin_name or sf.blocks is None or not sf.ref.counted and sf.bin_name in entries and \
                entries[sf.bin_name].units is not None:
            continue
        e = entries.get(sf.bin_name)
        if e is None:
            continue
        owner = oid(sf.ref.column)
        e.units = _units_for(sf.blocks, np.full(len(sf.blocks), owner, dtype=np.int32))
        e.kind_names = {int(m): METHOD_NAMES.get(int(m), f"0x{int(m):02x}") for m in distinct(sf.blocks.methods)}
        e.owner_names = {owner: sf.ref.column}
        e.sections[ENGINE].update({
            "column": sf.ref.column, "stream": sf.ref.stream, "substream": sf.ref.substream,
            "blocks": len(sf.blocks), "compressed_bytes": sf.bin_size,
            "uncompressed_bytes": sf.blocks.uncompressed_bytes, "codecs": sf.blocks.codec_counts(),
            "marks_file": sf.marks_name, "marks": len(sf.marks) if sf.marks is not None else None,
            "checksums_verified": sf.blocks.checksum_ok is not None})
        e.detail[ENGINE] = {"part": p, "stream": sf, "chains": sf.blocks.chain_names(),
                            "chain_ids": sf.blocks.chain_ids}
    # units of the other compressed files: .cmrk* marks and primary.cidx
    _compressed_side_units(p, entries, oid)
    # units of a Compact data.bin
    cd = p.compact
    if cd is not None and cd.blocks is not None and "data.bin" in entries:
        e = entries["data.bin"]
        owners_local = compact_block_owners(p)
        if owners_local is None:
            owners = np.full(len(cd.blocks), -1, dtype=np.int32)
        else:
            ids = np.array([oid(c.name) for c in p.columns] + [-1], dtype=np.int32)
            owners = ids[np.where(owners_local >= 0, owners_local, len(p.columns))]
        e.units = _units_for(cd.blocks, owners)
        e.kind_names = {int(m): METHOD_NAMES.get(int(m), f"0x{int(m):02x}") for m in distinct(cd.blocks.methods)}
        e.owner_names = {int(o): name for o, name in ((oid(c.name), c.name) for c in p.columns)}
        e.sections[ENGINE].update({
            "blocks": len(cd.blocks), "compressed_bytes": cd.bin_size,
            "uncompressed_bytes": cd.blocks.uncompressed_bytes, "codecs": cd.blocks.codec_counts(),
            "marks_file": cd.marks_name, "marks": len(cd.marks) if cd.marks is not None else None})
        e.detail[ENGINE] = {"part": p, "compact": cd, "chains": cd.blocks.chain_names(),
                            "chain_ids": cd.blocks.chain_ids}
